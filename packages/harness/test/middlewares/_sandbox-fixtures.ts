import type { Runtime } from "../../src/runtime/types";
import type { ToolCallRequest, ToolCallResult } from "../../src/runtime/types";
import { toolMessage } from "../../src/messages";
import { createRunContext, createRunOutcomeRecorder } from "../../src/runtime";
import type { AgentState } from "../../src/state";

/** A hand-built Runtime for calling hooks directly. */
export function hookRuntime(threadId: string, userId = "default"): Runtime {
  return {
    threadId,
    runId: `run-${threadId}-${Math.random()}`,
    context: createRunContext({ threadId, runId: "r", context: { user_id: userId } }),
    outcome: createRunOutcomeRecorder(),
    signal: new AbortController().signal,
    model: {} as Runtime["model"],
    modelCalls: 0,
    writer: () => {},
    emit: () => {},
    config: { configurable: {}, metadata: {}, recursionLimit: 100 },
  };
}

/** A tool-call request. */
export function toolRequest(name: string, args: Record<string, unknown>, state: AgentState, runtime: Runtime, metadata?: Record<string, unknown>): ToolCallRequest {
  return {
    toolCall: { id: `call-${Math.random().toString(36).slice(2)}`, name, args },
    tool: metadata ? ({ name, metadata } as ToolCallRequest["tool"]) : undefined,
    state,
    runtime,
  };
}

/** A handler returning a fixed text. */
export const okHandler = (text = "OK") => async (req: ToolCallRequest): Promise<ToolCallResult> =>
  toolMessage(text, { tool_call_id: req.toolCall.id, name: req.toolCall.name });
