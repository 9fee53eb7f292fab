import type { ChatModel } from "../models";
import type { Message } from "../messages";
import type { RunTask } from "./task-events";

/** Where a `messages` event comes from: the run, its position, the task that wrote it, and (for a model node) the model. */
export interface MessageEventSource {
  /** The run's metadata (the agent's settings), first in every event's metadata. */
  metadata: Record<string, unknown> | undefined;
  threadId: string;
  /** Namespace of a nested run (empty at the top level): the parent's `<node>:<task-id>` entries. */
  ns: readonly string[];
  /** The step the event belongs to (the step being written next). */
  step: number;
  /** The task of the node that wrote the message (its id names the node's namespace `<node>:<task-id>`). */
  task: Pick<RunTask, "id"> | undefined;
}

/**
 * `messages` event metadata as LangGraph builds it: the run's metadata, then
 * where the event comes from; a model node adds LangSmith's provider keys.
 * Tool messages come from a pushed task (`__pregel_push`), everything else
 * from a node reached by its branch. The checkpoint namespace is the node's
 * `<node>:<task-id>`, after the parent's entries in a nested run
 * (`tools:<task-id>|model:<task-id>`); model chunks and nested runs also
 * carry it as `checkpoint_ns`, as LangGraph's do.
 */
export function messageEventMeta(src: MessageEventSource, node: string, model?: ChatModel): Record<string, unknown> {
  const { step } = src;
  const pushed = node === "tools";
  const own = `${node}:${src.task?.id ?? ""}`;
  const ns = src.ns.length ? `${src.ns.join("|")}|${own}` : own;
  return {
    ...src.metadata,
    thread_id: src.threadId,
    langgraph_step: step,
    langgraph_node: node,
    langgraph_triggers: pushed ? ["__pregel_push"] : [`branch:to:${node}`],
    langgraph_path: pushed ? ["__pregel_push", 0, false] : ["__pregel_pull", node],
    langgraph_checkpoint_ns: ns,
    ...(src.ns.length || model ? { checkpoint_ns: ns } : {}),
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
