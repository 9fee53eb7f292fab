import type { AIMessage, Message } from "../../src/messages";
import { aiMessage } from "../../src/messages";
import type { CustomEvent } from "../../src/tools";
import type { AgentMiddleware, ModelCallRequest, Runtime } from "../../src/runtime";
import { applyUpdate, threadStateSchema } from "../../src/state";
import type { AgentState, StateUpdate } from "../../src/state";
import { createRunContext, createRunOutcomeRecorder } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";

/** A hand-built runtime (thread/run ids configurable) recording custom events. */
export function leadRuntime(o: { threadId?: string; runId?: string; context?: Record<string, unknown>; model?: Runtime["model"] } = {}): Runtime & { events: CustomEvent[] } {
  const events: CustomEvent[] = [];
  const threadId = o.threadId ?? "t1";
  const runId = o.runId ?? "r1";
  return {
    threadId,
    runId,
    context: createRunContext({ threadId, runId, context: { user_id: "u1", ...(o.context ?? {}) } }),
    outcome: createRunOutcomeRecorder(),
    signal: new AbortController().signal,
    model: o.model ?? new ScriptedModel([]),
    modelCalls: 0,
    writer: (e: CustomEvent) => void events.push(e),
    emit: () => {},
    config: { configurable: {}, metadata: {}, recursionLimit: 100 },
    events,
  } as Runtime & { events: CustomEvent[] };
}

/** A state over thread-state defaults. */
export function leadState(messages: Message[], extra: Record<string, unknown> = {}): AgentState {
  return { messages, artifacts: [], viewed_images: {}, delegations: [], skill_context: [], ...extra } as AgentState;
}

/** Apply a hook result (minus `jumpTo`) with the thread-state reducers. */
export function apply(state: AgentState, update: (StateUpdate & { jumpTo?: string }) | void | undefined): AgentState {
  if (!update) return state;
  const { jumpTo: _j, ...rest } = update;
  return applyUpdate(threadStateSchema, state, rest);
}

/** Run a middleware's wrapModelCall with a capturing handler. */
export async function wrapModel(mw: AgentMiddleware, state: AgentState, runtime: Runtime, opts: { systemPrompt?: string; reply?: AIMessage } = {}) {
  const seen: ModelCallRequest[] = [];
  const req: ModelCallRequest = { model: runtime.model, systemPrompt: opts.systemPrompt, messages: state.messages, tools: [], settings: {}, state, runtime };
  const out = await mw.wrapModelCall!(req, async (r) => {
    seen.push(r);
    return opts.reply ?? aiMessage("ok");
  });
  return { seen, out, req };
}

/** An AI message calling tools. */
export function callAI(calls: Array<{ name: string; args?: Record<string, unknown>; id?: string }>, fields: Parameters<typeof aiMessage>[1] = {}): AIMessage {
  return aiMessage("", { ...fields, tool_calls: calls.map((c, i) => ({ id: c.id ?? `c${i}`, name: c.name, args: c.args ?? {} })) });
}
