/**
 * The records of scheduled tasks: a task (what to run, when, for whom) and
 * the history of its occurrences. Field names are camelCase here; the HTTP
 * API speaks DeerFlow's snake_case names for the same fields.
 */

/** Where a task's runs happen: a new thread each time, or one thread of the caller's. */
export type ScheduledContextMode = "fresh_thread_per_run" | "reuse_thread";

/** A one-off time (`{run_at}`) or a five-field cron expression in a time zone (`{cron}`). */
export type ScheduleType = "once" | "cron";

/** DeerFlow's task states: `running` while one of its occurrences executes. */
export type ScheduledTaskStatus = "enabled" | "paused" | "running" | "completed" | "failed" | "cancelled";

/** DeerFlow's occurrence states; `skipped` records a slot that did not run (overlap or downtime). */
export type ScheduledRunStatus = "queued" | "running" | "success" | "failed" | "skipped" | "interrupted";

/** What started an occurrence: its slot coming due, or `POST /scheduled-tasks/{id}/trigger`. */
export type ScheduledRunTrigger = "scheduled" | "manual";

/**
 * What the scheduler does with slots that came due while no scheduler was
 * running (the server was down): `skip` records them as skipped and waits for
 * the next future slot; `run_once` runs the task once now for the latest
 * missed slot (earlier missed slots are recorded as skipped).
 */
export type CatchUpPolicy = "skip" | "run_once";

/** The schedule's parameters: `cron` for `cron` tasks, `run_at` (ISO-8601) for `once` tasks. */
export interface ScheduleSpec {
  cron?: string;
  run_at?: string;
}

/** One scheduled task. */
export interface ScheduledTask {
  id: string;
  /** The owner: only this user sees, changes or triggers the task, and its runs are theirs. */
  userId: string;
  /** The thread of a `reuse_thread` task; null for `fresh_thread_per_run`. */
  threadId: string | null;
  contextMode: ScheduledContextMode;
  assistantId: string;
  title: string;
  /** The human message each run starts with. */
  prompt: string;
  scheduleType: ScheduleType;
  scheduleSpec: ScheduleSpec;
  /** IANA zone the cron expression is read in (`Europe/London`). */
  timezone: string;
  status: ScheduledTaskStatus;
  /** The next slot (UTC ISO-8601), null when none is left. */
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastRunId: string | null;
  lastThreadId: string | null;
  lastError: string | null;
  runCount: number;
  createdAt: string;
  updatedAt: string;
  /** The process executing the task's current occurrence (status `running`), null otherwise. */
  leaseOwner: string | null;
  /** Until when (epoch ms) that process holds the task; past it another process may recover the task. */
  leaseUntil: number | null;
  /** The status the task returns to when the current occurrence ends (a manual run of a paused task stays paused). */
  resumeStatus: ScheduledTaskStatus | null;
}

/** One occurrence of a task, kept as history. */
export interface ScheduledTaskRun {
  id: string;
  taskId: string;
  /** The thread the occurrence ran (or would have run) on; empty for a skipped slot of a fresh-thread task. */
  threadId: string;
  /** The run of the run service, once started. */
  runId: string | null;
  /** The slot (UTC ISO-8601); the trigger time for a manual run. */
  scheduledFor: string;
  trigger: ScheduledRunTrigger;
  status: ScheduledRunStatus;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  createdAt: string;
}

/** The fields a task is created with; the rest start empty. */
export type NewScheduledTask = Pick<
  ScheduledTask,
  "id" | "userId" | "threadId" | "contextMode" | "assistantId" | "title" | "prompt" | "scheduleType" | "scheduleSpec" | "timezone" | "nextRunAt" | "createdAt"
>;

/** Fields of a task an owner's edit may change. */
export type ScheduledTaskPatch = Partial<
  Pick<ScheduledTask, "threadId" | "contextMode" | "title" | "prompt" | "scheduleSpec" | "timezone" | "status" | "nextRunAt" | "lastError">
>;

/** A task with a slot `scheduledFor` (or a manual trigger) claimed by one process. */
export interface SlotClaim {
  taskId: string;
  /** Compare-and-set guard: the claim only succeeds while the task still has this `next_run_at` (null: a manual trigger). */
  expectedNextRunAt: string | null;
  /** Compare-and-set guard: the task's status must be one of these. */
  expectedStatuses: readonly ScheduledTaskStatus[];
  /** The task's next slot after this claim. */
  nextRunAt: string | null;
  /** The task's status after the claim (`running` when an occurrence is started). */
  status: ScheduledTaskStatus;
  /** Set when an occurrence is started: the claiming process and its lease. */
  lease?: { owner: string; until: number; resumeStatus: ScheduledTaskStatus };
  /** History rows written with the claim (the started occurrence, skipped slots). */
  runs: ScheduledTaskRun[];
  lastError?: string | null;
  updatedAt: string;
}

/** How an occurrence ended. */
export interface RunCompletion {
  taskId: string;
  runRowId: string;
  owner: string;
  status: Extract<ScheduledRunStatus, "success" | "failed" | "interrupted">;
  error: string | null;
  runId: string | null;
  threadId: string;
  finishedAt: string;
  /** The task's status afterwards. */
  taskStatus: ScheduledTaskStatus;
}
