import type { AIMessage, Message, ToolCall } from "../../src/messages";
import { aiMessage } from "../../src/messages";
import type { CustomEvent } from "../../src/tools";
import type { ModelCallRequest, Runtime, ToolCallRequest } from "../../src/runtime";
import type { AgentState } from "../../src/state";
import { createRunContext, createRunOutcomeRecorder } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";

/** A hand-built runtime that records custom events. */
export function makeRuntime(overrides: Partial<Runtime> & { events?: CustomEvent[] } = {}): Runtime & { events: CustomEvent[] } {
  const events = overrides.events ?? [];
  const controller = new AbortController();
  return {
    threadId: "thread-1",
    runId: "run-1",
    context: createRunContext({ threadId: "thread-1", runId: "run-1", context: { user_id: "user-1" } }),
    outcome: createRunOutcomeRecorder(),
    signal: controller.signal,
    model: new ScriptedModel([]),
    modelCalls: 0,
    writer: (e: CustomEvent) => void events.push(e),
    emit: () => {},
    config: { configurable: {}, metadata: {}, recursionLimit: 100 },
    ...overrides,
    events,
  } as Runtime & { events: CustomEvent[] };
}

/** A model-call request over `messages`. */
export function modelRequest(messages: Message[], runtime: Runtime = makeRuntime(), model = runtime.model): ModelCallRequest {
  return { model, messages, tools: [], settings: {}, state: { messages } as AgentState, runtime };
}

/** A model handler recording every request it receives and answering with `reply`. */
export function captureModel(reply: AIMessage = aiMessage("ok")) {
  const seen: ModelCallRequest[] = [];
  const handler = async (r: ModelCallRequest) => {
    seen.push(r);
    return reply;
  };
  return { seen, handler };
}

/** A tool-call request. */
export function toolRequest(call: Partial<ToolCall> & { name: string }, state: Partial<AgentState> = {}, runtime: Runtime = makeRuntime()): ToolCallRequest {
  return {
    toolCall: { id: call.id ?? "call-1", name: call.name, args: call.args ?? {}, type: "tool_call" },
    state: { messages: [], ...state } as AgentState,
    runtime,
  };
}
