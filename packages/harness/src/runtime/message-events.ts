import type { ChatModel } from "../models";
import type { Message } from "../messages";

/** Where a `messages` event comes from: the run, its position, and (for a model node) the model. */
export interface MessageEventSource {
  /** The run's metadata (the agent's settings), first in every event's metadata. */
  metadata: Record<string, unknown> | undefined;
  threadId: string;
  runId: string;
  /** Namespace of a nested run (empty at the top level). */
  ns: readonly string[];
  /** The step the event belongs to (the step being written next). */
  step: number;
}

/**
 * `messages` event metadata as LangGraph builds it: the run's metadata, then
 * where the event comes from; a model node adds LangSmith's provider keys.
 * Tool messages come from a pushed task (`__pregel_push`), everything else
 * from a node reached by its branch.
 */
export function messageEventMeta(src: MessageEventSource, node: string, model?: ChatModel): Record<string, unknown> {
  const { step } = src;
  const pushed = node === "tools";
  return {
    ...src.metadata,
    thread_id: src.threadId,
    langgraph_step: step,
    langgraph_node: node,
    langgraph_triggers: pushed ? ["__pregel_push"] : [`branch:to:${node}`],
    langgraph_path: pushed ? ["__pregel_push", 0, false] : ["__pregel_pull", node],
    langgraph_checkpoint_ns: `${node}:${src.runId}:${step}`,
    ...(src.ns.length ? { checkpoint_ns: src.ns.join("|") } : model ? { checkpoint_ns: `${node}:${src.runId}:${step}` } : {}),
    ...(model ? { ls_provider: model.provider, ls_model_name: model.modelName, ls_model_type: "chat", ls_temperature: null } : {}),
  };
}

/**
 * The messages of `written` (a state update's `messages`) under an id the
 * thread did not hold before: what a hook adds that the stream has not shown.
 */
export function unseenMessages(before: readonly Message[] | undefined, written: unknown): Message[] {
  if (!Array.isArray(written)) return [];
  let seen: Set<string> | undefined;
  const out: Message[] = [];
  for (const m of written as Message[]) {
    if (!m || typeof m !== "object" || !m.id || !("type" in m)) continue;
    seen ??= new Set((before ?? []).map((x) => x.id).filter((id): id is string => !!id));
    if (!seen.has(m.id)) out.push(m);
  }
  return out;
}
