import type { ScheduledTask, ScheduledTaskRun, ScheduleSpec } from "./types";

/** A row as either database returns it (column name → value). */
export type Row = Record<string, unknown>;

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A task from its row (the spec is stored as JSON text). */
export function taskFromRow(r: Row): ScheduledTask {
  let spec: ScheduleSpec = {};
  try {
    spec = JSON.parse(String(r.schedule_spec ?? "{}")) as ScheduleSpec;
  } catch {
    // a spec that no longer parses is shown empty; the task cannot be scheduled and says so when it is edited
  }
  return {
    id: String(r.id),
    userId: String(r.user_id),
    threadId: text(r.thread_id),
    contextMode: String(r.context_mode) as ScheduledTask["contextMode"],
    assistantId: String(r.assistant_id),
    title: String(r.title),
    prompt: String(r.prompt),
    scheduleType: String(r.schedule_type) as ScheduledTask["scheduleType"],
    scheduleSpec: spec,
    timezone: String(r.timezone),
    status: String(r.status) as ScheduledTask["status"],
    nextRunAt: text(r.next_run_at),
    lastRunAt: text(r.last_run_at),
    lastRunId: text(r.last_run_id),
    lastThreadId: text(r.last_thread_id),
    lastError: text(r.last_error),
    runCount: Number(r.run_count ?? 0),
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at),
    leaseOwner: text(r.lease_owner),
    leaseUntil: num(r.lease_until),
    resumeStatus: text(r.resume_status) as ScheduledTask["resumeStatus"],
  };
}

/** An occurrence from its row. */
export function runFromRow(r: Row): ScheduledTaskRun {
  return {
    id: String(r.id),
    taskId: String(r.task_id),
    threadId: String(r.thread_id ?? ""),
    runId: text(r.run_id),
    scheduledFor: String(r.scheduled_for),
    trigger: String(r.trigger_kind) as ScheduledTaskRun["trigger"],
    status: String(r.status) as ScheduledTaskRun["status"],
    error: text(r.error),
    startedAt: text(r.started_at),
    finishedAt: text(r.finished_at),
    createdAt: String(r.created_at),
  };
}

/** Task fields an edit may change → their columns (`scheduleSpec` is stored as JSON). */
export const PATCH_COLUMNS: Record<string, string> = {
  threadId: "thread_id",
  contextMode: "context_mode",
  title: "title",
  prompt: "prompt",
  scheduleSpec: "schedule_spec",
  timezone: "timezone",
  status: "status",
  nextRunAt: "next_run_at",
  lastError: "last_error",
};

/** The column values of a patch, in a fixed order. */
export function patchEntries(patch: Record<string, unknown>): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [key, column] of Object.entries(PATCH_COLUMNS)) {
    if (!(key in patch) || patch[key] === undefined) continue;
    out.push([column, key === "scheduleSpec" ? JSON.stringify(patch[key]) : patch[key]]);
  }
  return out;
}

/** The statuses an occurrence still has while it has not ended. */
export const UNFINISHED_RUN_STATUSES = ["queued", "running"] as const;
