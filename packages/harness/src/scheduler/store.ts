import type { NewScheduledTask, RunCompletion, ScheduledTask, ScheduledTaskPatch, ScheduledTaskRun, SlotClaim } from "./types";

/** Why a delete did not happen. */
export type DeleteOutcome = "deleted" | "not_found" | "executing";

/**
 * Where scheduled tasks and their history live. Every method is one atomic
 * step against every process sharing the database: {@link claim} is a
 * compare-and-set on the task's `next_run_at` and status, so of several
 * schedulers seeing the same due slot exactly one wins it, and the history
 * rows it writes are written with it or not at all.
 */
export interface ScheduledTaskStore {
  create(task: NewScheduledTask): Promise<ScheduledTask>;
  get(id: string): Promise<ScheduledTask | undefined>;
  /** A user's tasks (of one thread when given), newest first. */
  list(userId: string, threadId?: string): Promise<ScheduledTask[]>;
  /** Apply an owner's edit unless an occurrence is executing (status `running`): undefined then, or when unknown. */
  update(id: string, patch: ScheduledTaskPatch, updatedAt: string): Promise<ScheduledTask | undefined>;
  /** Delete a task and its history, unless an occurrence is executing. */
  delete(id: string): Promise<DeleteOutcome>;
  /** Tasks whose next slot is at or before `now` (enabled ones, and running ones whose next slot overlaps), oldest slot first. */
  due(now: string, limit: number): Promise<ScheduledTask[]>;
  /** Take a slot (or a manual trigger): true when this call won it. */
  claim(claim: SlotClaim): Promise<boolean>;
  /** Extend the lease of the process executing the task's occurrence; false when it no longer holds it. */
  renewLease(taskId: string, owner: string, until: number): Promise<boolean>;
  /** Record that an occurrence's run started. */
  markStarted(runRowId: string, runId: string, threadId: string, startedAt: string): Promise<void>;
  /** Record how an occurrence ended and release the task; false when `owner` had lost the lease. */
  complete(completion: RunCompletion): Promise<boolean>;
  /** Running tasks whose lease ran out before `nowMs` (their process died or hung). */
  expired(nowMs: number, limit: number): Promise<ScheduledTask[]>;
  /**
   * Give a task whose lease ran out back to its schedule: its unfinished
   * occurrences become `interrupted`. False when another process did so first
   * or the owner renewed in the meantime.
   */
  recover(taskId: string, staleOwner: string, nowMs: number, now: string): Promise<boolean>;
  /** A task's history, newest first. */
  listRuns(taskId: string, limit: number, offset: number): Promise<ScheduledTaskRun[]>;
  close(): Promise<void>;
}
