/**
 * Sub-agent (`task`) cards: live state from the `task_*` custom events and,
 * after a reload, from the terminal `task` ToolMessage's status metadata.
 */
import type { ToolCall, WireMessage } from "./types";

/** Cumulative token usage of one sub-agent (replaced, never summed: each event carries the total so far). */
export interface SubtaskUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** One live step of a sub-agent: an AI message (its text and the tools it called). */
export interface SubtaskStep {
  index: number;
  text: string;
  tools: string[];
}

/** Status shown on a card. */
export type SubtaskStatus = "running" | "completed" | "failed" | "cancelled" | "timed_out" | "polling_timed_out";

/** What a sub-agent card shows. */
export interface Subtask {
  taskId: string;
  description?: string;
  subagentType?: string;
  status: SubtaskStatus;
  modelName?: string;
  steps: SubtaskStep[];
  result?: string;
  error?: string;
  stopReason?: string;
  usage?: SubtaskUsage;
}

/** The note of a card whose sub-agent was stopped before it reported back. */
export const STOPPED_BEFORE_RESULT = "Stopped before this sub-agent reported back.";

/** Every card still running marked "cancelled" (the user stopped the run). */
export function cancelRunning(subtasks: Record<string, Subtask>): Record<string, Subtask> {
  const out: Record<string, Subtask> = {};
  for (const [id, t] of Object.entries(subtasks)) out[id] = t.status === "running" ? { ...t, status: "cancelled", error: t.error ?? STOPPED_BEFORE_RESULT } : t;
  return out;
}

const TERMINAL: Record<string, SubtaskStatus> = {
  task_completed: "completed",
  task_failed: "failed",
  task_cancelled: "cancelled",
  task_timed_out: "timed_out",
};

function usageOf(v: unknown): SubtaskUsage | undefined {
  if (!v || typeof v !== "object") return undefined;
  const u = v as Record<string, unknown>;
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : 0);
  return { input_tokens: n(u.input_tokens), output_tokens: n(u.output_tokens), total_tokens: n(u.total_tokens) };
}

function messageText(m: WireMessage | undefined): string {
  if (!m) return "";
  if (typeof m.content === "string") return m.content;
  if (!Array.isArray(m.content)) return "";
  return m.content
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("");
}

/** The larger cumulative snapshot wins, so a late or replayed frame never rolls a card back. */
function newerUsage(prev: SubtaskUsage | undefined, next: SubtaskUsage | undefined): SubtaskUsage | undefined {
  if (!next) return prev;
  if (!prev) return next;
  return next.total_tokens >= prev.total_tokens ? next : prev;
}

/**
 * Fold one custom event into the sub-agent map. Returns `undefined` when the
 * event is not a `task_*` event (the caller keeps its state). A terminal
 * status is final: later non-terminal frames do not reopen the card.
 */
export function applyTaskEvent(subtasks: Record<string, Subtask>, data: unknown): Record<string, Subtask> | undefined {
  if (!data || typeof data !== "object") return undefined;
  const d = data as Record<string, unknown>;
  const type = typeof d.type === "string" ? d.type : "";
  const taskId = typeof d.task_id === "string" ? d.task_id : "";
  if (!type.startsWith("task_") || !taskId) return undefined;
  const prev: Subtask = subtasks[taskId] ?? { taskId, status: "running", steps: [] };
  const next: Subtask = { ...prev };
  if (typeof d.model_name === "string") next.modelName = d.model_name;
  if (type === "task_started") {
    if (typeof d.description === "string") next.description = d.description;
  } else if (type === "task_running") {
    const msg = d.message as WireMessage | undefined;
    const index = typeof d.message_index === "number" ? d.message_index : prev.steps.length + 1;
    if (!prev.steps.some((s) => s.index === index)) {
      const tools = ((msg?.tool_calls ?? []) as ToolCall[]).map((c) => c.name);
      next.steps = [...prev.steps, { index, text: messageText(msg), tools }].sort((a, b) => a.index - b.index);
    }
    next.usage = newerUsage(prev.usage, usageOf(d.usage));
  } else if (TERMINAL[type]) {
    if (prev.status !== "running") return subtasks;
    next.status = TERMINAL[type];
    if (typeof d.result === "string") next.result = d.result;
    if (typeof d.error === "string") next.error = d.error;
    next.usage = newerUsage(prev.usage, usageOf(d.usage));
  } else {
    return undefined;
  }
  return { ...subtasks, [taskId]: next };
}

/**
 * A card from history: the `task` call's arguments plus its terminal
 * ToolMessage metadata (`subagent_status`, `subagent_result_brief`,
 * `subagent_error`, `subagent_model_name`, `subagent_token_usage`), merged
 * over what live events already showed.
 */
export function subtaskFor(call: ToolCall, result: WireMessage | undefined, live: Subtask | undefined, streaming: boolean): Subtask {
  const args = call.args ?? {};
  // No result and no run: the run was stopped (or its process died) before the sub-agent reported back. That is
  // "cancelled", as the harness stores it and the CLI prints it, never a card that spins on or says "failed".
  const ended = !result && !streaming;
  const seed: Subtask | undefined = live && ended && live.status === "running" ? { ...live, status: "cancelled" } : live;
  const base: Subtask = seed ?? { taskId: call.id ?? "", status: result ? "failed" : streaming ? "running" : "cancelled", steps: [] };
  const card: Subtask = {
    ...base,
    description: base.description ?? (typeof args.description === "string" ? args.description : undefined),
    subagentType: typeof args.subagent_type === "string" ? args.subagent_type : base.subagentType,
  };
  if (!result) {
    if (ended) card.error = card.error ?? STOPPED_BEFORE_RESULT;
    return card;
  }
  const k = result.additional_kwargs ?? {};
  const status = typeof k.subagent_status === "string" ? (k.subagent_status as SubtaskStatus) : result.status === "error" ? "failed" : "completed";
  card.status = status;
  if (typeof k.subagent_model_name === "string") card.modelName = k.subagent_model_name;
  if (typeof k.subagent_stop_reason === "string") card.stopReason = k.subagent_stop_reason;
  card.usage = newerUsage(card.usage, usageOf(k.subagent_token_usage));
  const text = messageText(result);
  if (status === "completed") {
    card.result = text.replace(/^Task Succeeded(?: \(capped: [^)]*\))?\. Result: /, "");
    card.error = undefined;
  } else {
    card.error = typeof k.subagent_error === "string" ? k.subagent_error : card.error ?? text;
  }
  return card;
}
