import { wireTimestamp } from "@deerflow-ts/harness";
import type { Message, RunRecord, StateSnapshot } from "@deerflow-ts/harness";
import { publicStateValues } from "../security";

// ThreadResponse objects are built by the harness (threadRecordResponse,
// threadSummaryResponse, threadDetailResponse), shared with the embedded client.

/** The wire shape of `GET /threads/{id}/state`. */
export function stateResponse(threadId: string, snap: StateSnapshot): Record<string, unknown> {
  return {
    values: publicStateValues(snap.values),
    next: snap.next,
    metadata: snap.metadata,
    checkpoint: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: snap.checkpointId, id: snap.checkpointId, ts: wireTimestamp(snap.createdAt) },
    parent_checkpoint: snap.parentCheckpointId
      ? { thread_id: threadId, checkpoint_ns: "", checkpoint_id: snap.parentCheckpointId }
      : null,
    checkpoint_id: snap.checkpointId,
    parent_checkpoint_id: snap.parentCheckpointId,
    created_at: wireTimestamp(snap.createdAt),
    // LangGraph's pending-task shape: a run cancelled mid-loop keeps the task it would run next.
    tasks: snap.next.map((name, i) => ({
      id: `${snap.checkpointId}:${i}`,
      name,
      path: ["__pregel_pull", name],
      error: null,
      interrupts: snap.interrupts,
      checkpoint: null,
      state: null,
      result: null,
    })),
    interrupts: snap.interrupts,
  };
}

const HISTORY_KEYS = ["title", "thread_data", "artifacts", "todos", "goal"] as const;

/**
 * One `HistoryEntry`: `values` has title/thread_data/artifacts/todos/goal,
 * plus `messages` (with top-level `run_id` on AI/tool messages and
 * `turn_duration` on each run's last AI message) when `withMessages`.
 */
export function historyEntry(
  snap: StateSnapshot,
  withMessages: boolean,
  runIds: Map<string, string>,
  runs: Map<string, RunRecord>,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  const v = snap.values as Record<string, unknown>;
  for (const k of HISTORY_KEYS) if (v[k] !== undefined) values[k] = v[k];
  if (values.thread_data) values.thread_data = publicStateValues({ thread_data: values.thread_data }).thread_data;
  if (withMessages) values.messages = annotateMessages(snap.values.messages ?? [], runIds, runs);
  return {
    checkpoint_id: snap.checkpointId,
    parent_checkpoint_id: snap.parentCheckpointId,
    metadata: stripInternals(snap.metadata),
    values,
    created_at: wireTimestamp(snap.createdAt),
    next: snap.next,
  };
}

const HISTORY_DROPPED = new Set(["source", "parents", "writes", "writer"]);

function stripInternals(meta: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // DeerFlow's history drops LangGraph's bookkeeping keys (they stay on /state)
  for (const [k, val] of Object.entries(meta ?? {})) if (!k.startsWith("__") && !k.startsWith("langgraph_") && !HISTORY_DROPPED.has(k)) out[k] = val;
  return out;
}

/** Add `run_id` to AI/tool messages and `turn_duration` to each run's last AI message. */
export function annotateMessages(messages: Message[], runIds: Map<string, string>, runs: Map<string, RunRecord>): Array<Record<string, unknown>> {
  const out = messages.map((m) => {
    const copy = { ...(m as unknown as Record<string, unknown>) };
    const runId = (m.id && runIds.get(m.id)) || (m.additional_kwargs?.run_id as string | undefined);
    if (runId && (m.type === "ai" || m.type === "tool")) copy.run_id = runId;
    return copy;
  });
  const lastAi = new Map<string, number>();
  out.forEach((m, i) => {
    if (m.type === "ai" && typeof m.run_id === "string") lastAi.set(m.run_id, i);
  });
  for (const [runId, i] of lastAi) {
    const run = runs.get(runId);
    if (!run || run.status === "running" || run.status === "pending") continue;
    const seconds = (Date.parse(run.updatedAt) - Date.parse(run.createdAt)) / 1000;
    out[i] = { ...out[i], additional_kwargs: { ...((out[i].additional_kwargs as object) ?? {}), turn_duration: seconds } };
  }
  return out;
}
