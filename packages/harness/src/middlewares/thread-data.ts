import { z } from "zod";
import { isoNow } from "../clock";
import type { AgentMiddleware } from "../runtime/types";
import { ensureThreadDirs, threadDirs } from "../sandbox";
import { threadStateSchema } from "../state";
import type { ThreadDataState } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

const optionsSchema = z
  .object({
    /** Runtime home; thread data lives under `{base_dir}/users/{user}/threads/{thread}/user-data`. */
    base_dir: z.string().min(1),
    /** Create the directories on demand (default) instead of in before_agent. */
    lazy_init: z.boolean().default(true),
  })
  .strict();

/** Options of {@link createThreadDataMiddleware}. */
export type ThreadDataMiddlewareOptions = z.input<typeof optionsSchema>;

/**
 * ThreadData (DeerFlow chain #4): before_agent writes `thread_data` — the
 * host paths of the thread's workspace/uploads/outputs for the run's user
 * (`context.identity.userId`, default `default`). With `lazy_init` (default) the
 * directories are created by the sandbox on first use.
 */
export function createThreadDataMiddleware(options: ThreadDataMiddlewareOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("ThreadDataMiddleware", optionsSchema, options);
  return {
    name: "ThreadDataMiddleware",
    stateSchema: { thread_data: threadStateSchema.thread_data },
    async beforeAgent(state, runtime) {
      const { userId } = runtime.context.identity;
      const dirs = threadDirs(opts.base_dir, runtime.threadId, userId);
      if (!opts.lazy_init) await ensureThreadDirs(dirs);
      const next: ThreadDataState = { workspace_path: dirs.workspace, uploads_path: dirs.uploads, outputs_path: dirs.outputs };
      const current = state.thread_data as ThreadDataState | null | undefined;
      const samePaths =
        !!current &&
        current.workspace_path === next.workspace_path &&
        current.uploads_path === next.uploads_path &&
        current.outputs_path === next.outputs_path;
      // DeerFlow stamps the turn's user message with the run that answers it (regenerate and the
      // transcript find the source run through it) and names it `user-input` unless it has a name.
      const last = state.messages[state.messages.length - 1];
      const stamped =
        last?.type === "human" && last.additional_kwargs?.run_id !== runtime.runId
          ? {
              ...last,
              name: last.name || "user-input",
              additional_kwargs: { ...(last.additional_kwargs ?? {}), run_id: runtime.runId, timestamp: isoNow().replace("Z", "+00:00") },
            }
          : undefined;
      if (samePaths && !stamped) return undefined;
      return { ...(samePaths ? {} : { thread_data: next }), ...(stamped ? { messages: [stamped] } : {}) };
    },
  };
}
