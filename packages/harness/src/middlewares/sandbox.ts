import { z } from "zod";
import type { ToolMessage } from "../messages";
import type { AgentMiddleware, ToolCallResult } from "../runtime/types";
import { ensureRunSandbox, releaseRunSandbox, runSandboxId } from "../sandbox";
import type { SandboxProvider } from "../sandbox";
import { Command, isCommand, threadStateSchema } from "../state";
import type { SandboxState } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

const optionsSchema = z
  .object({
    provider: z.custom<SandboxProvider>(
      (v) => !!v && typeof (v as SandboxProvider).acquire === "function" && typeof (v as SandboxProvider).release === "function",
      "provider must be a SandboxProvider",
    ),
    /** Acquire in before_agent instead of on the first sandbox tool call. */
    eager: z.boolean().default(false),
  })
  .strict();

/** Options of {@link createSandboxMiddleware}. */
export type SandboxMiddlewareOptions = z.input<typeof optionsSchema>;

function withSandboxUpdate(result: ToolCallResult, sandbox: SandboxState): ToolCallResult {
  if (isCommand(result)) {
    return new Command({ update: { ...result.update, sandbox }, goto: result.goto, resume: result.resume });
  }
  return new Command({ update: { messages: [result as ToolMessage], sandbox } });
}

/**
 * Sandbox (DeerFlow chain #6): acquires the thread's sandbox lazily on the
 * first call of a tool whose metadata says `requiresSandbox` (one lease per
 * run), writes `state.sandbox = {sandbox_id}` through that tool's result,
 * and releases the run's lease when the run ends (any status). The provider tears the
 * sandbox down only when no lease remains (e.g. a sub-agent still runs).
 */
export function createSandboxMiddleware(options: SandboxMiddlewareOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("SandboxMiddleware", optionsSchema, options);
  const provider = opts.provider as SandboxProvider;
  return {
    name: "SandboxMiddleware",
    stateSchema: { sandbox: threadStateSchema.sandbox },
    async beforeAgent(_state, runtime) {
      if (opts.eager) await ensureRunSandbox(provider, runtime.context);
      return undefined;
    },
    async wrapToolCall(request, handler) {
      const ctx = request.runtime.context;
      if (request.tool?.metadata?.requiresSandbox === true) {
        try {
          await ensureRunSandbox(provider, ctx);
        } catch {
          // The tool reports the failure as its own `Error: …` result.
        }
      }
      const result = await handler(request);
      const id = await runSandboxId(ctx);
      if (!id) return result;
      const current = (request.state as { sandbox?: SandboxState | null }).sandbox;
      if (current?.sandbox_id) return result; // already recorded (a different id would conflict in merge_sandbox)
      return withSandboxUpdate(result, { sandbox_id: id });
    },
    // Released in afterRun (not afterAgent) so cancelled and interrupted runs give their lease back too.
    async afterRun(_state, runtime) {
      await releaseRunSandbox(runtime.context);
    },
  };
}
