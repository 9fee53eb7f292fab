import { isChunk, mergeChunk, normaliseType } from "./merge";
import type { Notice, StreamPart, ThreadView, Todo, WireMessage } from "./types";
import { applyTaskEvent } from "./subtasks";

/** An empty view for a (new or not yet loaded) thread. */
export function emptyView(threadId?: string): ThreadView {
  return {
    threadId,
    messages: [],
    streamingIds: [],
    title: "",
    artifacts: [],
    todos: [],
    phase: "idle",
    notices: [],
    timings: {},
    nextNoticeId: 1,
    subtasks: {},
  };
}

function normaliseMessage(m: WireMessage): WireMessage {
  return { ...m, type: normaliseType(m.type) };
}

function stampTimings(view: ThreadView, messages: WireMessage[], now: number): Record<string, ThreadView["timings"][string]> {
  let timings = view.timings;
  for (const m of messages) {
    if (m.type === "ai") {
      for (const tc of m.tool_calls ?? []) {
        if (tc.id && !timings[tc.id]) timings = { ...timings, [tc.id]: { start: now } };
      }
    } else if (m.type === "tool" && m.tool_call_id) {
      const t = timings[m.tool_call_id];
      if (t && t.end === undefined) timings = { ...timings, [m.tool_call_id]: { ...t, end: now } };
    }
  }
  return timings;
}

/**
 * Applies a `values` snapshot: the message list is replaced by the snapshot, and messages that are still
 * streaming (seen as chunks but not yet in any snapshot) are kept after it. Title/artifacts/todos overlay.
 * Pass `now = null` for saved state (no tool timings are recorded).
 */
export function applyValues(view: ThreadView, values: Record<string, unknown>, now: number | null = Date.now()): ThreadView {
  const next: ThreadView = { ...view };
  if (Array.isArray(values.messages)) {
    const snap = (values.messages as WireMessage[]).map(normaliseMessage);
    const ids = new Set(snap.map((m) => m.id).filter(Boolean));
    const pending = view.messages.filter((m) => m.id && view.streamingIds.includes(m.id) && !ids.has(m.id));
    next.messages = [...snap, ...pending];
    next.streamingIds = pending.map((m) => m.id as string);
    // `now === null` (loading saved state): no timings, so no made-up durations.
    if (now !== null) next.timings = stampTimings(next, snap, now);
  }
  if (typeof values.title === "string" && values.title) next.title = values.title;
  if (Array.isArray(values.artifacts)) next.artifacts = values.artifacts.filter((a): a is string => typeof a === "string");
  if (Array.isArray(values.todos)) next.todos = values.todos as Todo[];
  return next;
}

/** Applies one `messages` tuple `[message, metadata]`. */
export function applyMessageTuple(view: ThreadView, data: unknown, now = Date.now()): ThreadView {
  const msg = (Array.isArray(data) ? data[0] : data) as WireMessage | undefined;
  if (!msg || typeof msg !== "object" || !msg.id) return view; // the SDK drops id-less chunks too
  const idx = view.messages.findIndex((m) => m.id === msg.id);
  let merged: WireMessage;
  if (isChunk(msg)) {
    merged = mergeChunk(idx >= 0 ? view.messages[idx] : undefined, msg);
  } else {
    merged = normaliseMessage(msg);
  }
  const messages = [...view.messages];
  if (idx >= 0) messages[idx] = merged;
  else messages.push(merged);
  const streamingIds = view.streamingIds.includes(msg.id) ? view.streamingIds : [...view.streamingIds, msg.id];
  return { ...view, messages, streamingIds, timings: stampTimings(view, [merged], now) };
}

/** Applies an `updates` frame; only the title (TitleMiddleware) and todos/artifacts are read from it. */
export function applyUpdates(view: ThreadView, data: unknown): ThreadView {
  if (!data || typeof data !== "object") return view;
  let next = view;
  for (const update of Object.values(data as Record<string, unknown>)) {
    const parts = Array.isArray(update) ? update : [update];
    for (const part of parts) {
      if (!part || typeof part !== "object") continue;
      const p = part as Record<string, unknown>;
      if (typeof p.title === "string" && p.title) next = { ...next, title: p.title };
      if (Array.isArray(p.todos)) next = { ...next, todos: p.todos as Todo[] };
    }
  }
  return next;
}

/** Adds a toast notice. */
export function addNotice(view: ThreadView, kind: Notice["kind"], text: string): ThreadView {
  return { ...view, notices: [...view.notices, { id: view.nextNoticeId, kind, text }], nextNoticeId: view.nextNoticeId + 1 };
}

/** Removes a toast notice by id. */
export function dismissNotice(view: ThreadView, id: number): ThreadView {
  return { ...view, notices: view.notices.filter((n) => n.id !== id) };
}

/**
 * The stream-to-view reducer: folds one SSE part (as yielded by the SDK) into the view.
 * Pure; `now` is injected for tool-step durations.
 */
export function applyStreamPart(view: ThreadView, part: StreamPart, now = Date.now()): ThreadView {
  let next = view;
  if (part.id) next = { ...next, lastEventId: part.id };
  const event = part.event.split("|")[0];
  switch (event) {
    case "metadata": {
      const d = part.data as { run_id?: string } | null;
      return { ...next, runId: d?.run_id ?? next.runId, phase: "streaming", error: undefined };
    }
    case "values":
      return applyValues({ ...next, phase: next.phase === "starting" ? "streaming" : next.phase }, (part.data ?? {}) as Record<string, unknown>, now);
    case "messages":
    case "messages/partial":
    case "messages/complete":
      return applyMessageTuple(next, part.data, now);
    case "updates":
      return applyUpdates(next, part.data);
    case "custom": {
      const d = part.data as { type?: string; message?: string; attempt?: number; max_attempts?: number } | null;
      const subtasks = applyTaskEvent(next.subtasks ?? {}, d);
      if (subtasks) return { ...next, subtasks };
      if (d?.type === "llm_retry") {
        const text = d.message || `Model call failed; retrying (attempt ${d.attempt ?? "?"} of ${d.max_attempts ?? "?"})`;
        return addNotice(next, "retry", text);
      }
      return next;
    }
    case "error": {
      // The model failed and the turn already ends in the answer that says so (with its Retry): the run's error
      // frame repeats it, so no banner (and no second Retry) is added on top.
      if (endsInErrorAnswer(next.messages)) return { ...next, phase: "error", streamingIds: [] };
      const d = part.data as { message?: string; error?: string; name?: string } | null;
      const text = d?.message || d?.error || "The run failed";
      return { ...next, phase: "error", error: text };
    }
    case "gap":
      return { ...next, error: "Part of the live stream was lost; reloaded from saved state." };
    case "end":
      return { ...next, phase: next.phase === "error" || next.phase === "cancelled" ? next.phase : "done", streamingIds: [] };
    default:
      return next;
  }
}

/** True when the last AI message is the model-error answer (`deerflow_error_fallback`) and nothing came after it. */
export function endsInErrorAnswer(messages: readonly WireMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.type === "human") return false;
    if (m.type === "ai") return m.additional_kwargs?.deerflow_error_fallback === true;
  }
  return false;
}
