import { formatZodError } from "../tools";
import type { CustomEvent, NestedStreamEvent, RunContext, ToolDefinition, ToolResult, ToolRuntime } from "../tools";
import { errorMessage } from "../errors";
import { isCommand } from "../state";
import type { AgentState } from "../state";
import { toolMessage } from "../messages";
import type { ToolCall, ToolMessage } from "../messages";
import { linkSignals } from "../abort";
import type { LinkedSignal } from "../abort";
import { GraphInterrupt, isAbortError, isGraphInterrupt } from "./interrupt";
import { runChild as runChildOf } from "./child-run";
import type { RunOutcomeRecorder } from "./outcome";
import type { ToolCallHandler, ToolCallRequest, ToolCallResult } from "./types";


/** Turn whatever a tool returned into a ToolMessage or Command. */
export function normaliseToolResult(result: ToolResult, call: ToolCall): ToolCallResult {
  if (isCommand(result)) return result;
  if (typeof result === "string" || Array.isArray(result)) {
    const content = typeof result === "string" && result.length === 0 ? "(no output)" : result;
    return toolMessage(content, { tool_call_id: call.id, name: call.name });
  }
  if (result && typeof result === "object" && (result as ToolMessage).type === "tool") {
    const m = result as ToolMessage;
    return { ...m, tool_call_id: m.tool_call_id || call.id, name: m.name ?? call.name };
  }
  if (result && typeof result === "object" && "content" in result) {
    const r = result as { content: string; artifact?: unknown; status?: "success" | "error" };
    return toolMessage(r.content === "" ? "(no output)" : r.content, {
      tool_call_id: call.id,
      name: call.name,
      status: r.status ?? "success",
      artifact: r.artifact,
    });
  }
  return toolMessage(String(result ?? "(no output)"), { tool_call_id: call.id, name: call.name });
}

/** An error tool message the model can read. */
export function errorToolMessage(call: { id: string; name: string }, text: string): ToolMessage {
  return toolMessage(text, { tool_call_id: call.id, name: call.name, status: "error" });
}

/** Dependencies of the innermost tool handler. */
export interface ToolExecDeps {
  tools: Map<string, ToolDefinition>;
  context: RunContext;
  outcome: RunOutcomeRecorder;
  runSignal: AbortSignal;
  writer(event: CustomEvent): void;
  emit(event: NestedStreamEvent): void;
  namespace: string[];
  defaultTimeoutMs?: number;
  /** Resume values for interrupted tool calls (by tool call id). */
  resumeValues: Map<string, unknown>;
}

/** The innermost tool handler: lookup, argument validation, timeout, execution. */
export function makeToolExecutor<S extends AgentState>(deps: ToolExecDeps): ToolCallHandler<S> {
  return async (req: ToolCallRequest<S>): Promise<ToolCallResult> => {
    const call = req.toolCall;
    const def = req.tool;
    if (!def) {
      const names = [...deps.tools.keys()].sort().join(", ");
      return errorToolMessage(call, `Error: Tool '${call.name}' not found. Available tools: ${names || "(none)"}`);
    }
    const parsed = def.schema.safeParse(call.args ?? {});
    if (!parsed.success) {
      return errorToolMessage(
        call,
        `Error: Invalid arguments for tool '${call.name}': ${formatZodError(parsed.error)}. Fix the arguments and call the tool again.`,
      );
    }
    const timeoutMs = def.timeoutMs ?? deps.defaultTimeoutMs;
    let timer: AbortController | undefined;
    let handle: NodeJS.Timeout | undefined;
    // With a timeout, the call's signal links the run's and the timer's, detached from the run's when the call is
    // over, since the run's may be a caller's signal reused across runs (work a tool leaves running after it
    // returns is not the call's any more). Without one it is the run's signal itself, read only when the tool asks.
    let linked: LinkedSignal | undefined;
    if (timeoutMs && timeoutMs > 0) {
      timer = new AbortController();
      handle = setTimeout(() => timer!.abort(new Error(`Tool '${call.name}' timed out after ${timeoutMs} ms`)), timeoutMs);
      linked = linkSignals([deps.runSignal, timer.signal]);
    }
    const runtime: ToolRuntime = {
      state: req.state,
      context: deps.context,
      outcome: deps.outcome,
      toolCallId: call.id,
      get signal() {
        return linked ? linked.signal : deps.runSignal;
      },
      writer: deps.writer,
      emit: deps.emit,
      namespace: deps.namespace,
      // a method, not an arrow property (the TypeScript loader names those at each creation, once per tool call)
      runChild(agent, input, options) {
        return runChildOf(runtime, agent, input, options);
      },
      interrupt<T>(value: unknown): T {
        if (deps.resumeValues.has(call.id)) {
          const v = deps.resumeValues.get(call.id);
          deps.resumeValues.delete(call.id);
          return v as T;
        }
        throw new GraphInterrupt(value, call.id);
      },
    };
    try {
      const exec = Promise.resolve(def.execute(parsed.data, runtime));
      const result = timer
        ? await Promise.race([
            exec,
            new Promise<never>((_, reject) =>
              timer!.signal.addEventListener("abort", () => reject(timer!.signal.reason), { once: true }),
            ),
          ])
        : await exec;
      return normaliseToolResult(result, call);
    } catch (err) {
      if (timer?.signal.aborted && !deps.runSignal.aborted) {
        return errorToolMessage(call, `Error: Tool '${call.name}' timed out after ${timeoutMs} ms.`);
      }
      throw err;
    } finally {
      if (handle) clearTimeout(handle);
      linked?.release();
    }
  };
}

/**
 * Run one tool call through the wrapped chain. Exceptions that escape every
 * middleware become an error tool message; interrupts and aborts propagate.
 */
export async function runToolCall<S extends AgentState>(
  handler: ToolCallHandler<S>,
  req: ToolCallRequest<S>,
): Promise<ToolCallResult> {
  try {
    return await handler(req);
  } catch (err) {
    if (isGraphInterrupt(err) || isAbortError(err) || req.runtime.signal.aborted) throw err;
    const name = err instanceof Error ? err.constructor.name : "Error";
    return errorToolMessage(req.toolCall, `Error: Tool '${req.toolCall.name}' failed with ${name}: ${errorMessage(err).slice(0, 500)}`);
  }
}
