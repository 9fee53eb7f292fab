/**
 * The run service's dealings with runs it does not execute itself: a cancel
 * routed to the owning process (or ending a run whose owner died), the
 * claims a resume takes before executing a run again here, waiting for a
 * run that executes elsewhere, and freeing a thread's slot across processes.
 */
import { errorMessage, RunServiceError } from "../errors";
import type { PersistenceStores, RunExecution, RunRecord } from "../persistence";
import { endOrphanRun } from "./abandon-run";
import type { RunBackends, StreamBridge } from "./backend-types";
import { TERMINAL } from "./local-run";
import type { CancelAction } from "./run-types";
import type { SlotWaiter } from "./slot-waiter";
import { untilStreamEnd } from "./slot-waiter";

/** What the cross-process steps act on (the run service's parts). */
export interface CrossProcessContext {
  readonly stores: PersistenceStores;
  readonly backends: RunBackends;
  readonly bridge: StreamBridge;
  readonly slots: SlotWaiter;
  readonly clock: () => number;
  /** Logs one line (already prefixed by the service). */
  readonly log: (message: string) => void;
}

/**
 * Cancel a run this process does not execute. `run_not_found` when unknown,
 * `run_not_cancellable` when already finished, `run_not_active_here` on one
 * process's backends (no other process to signal). A run whose lease expired
 * past grace is ended here as interrupted; otherwise the owner is signalled.
 * Resolves true when a cancel signal was sent (the caller may wait for the run).
 */
export async function cancelElsewhere(runId: string, action: CancelAction, at: CrossProcessContext): Promise<boolean> {
  const { stores, backends } = at;
  const rec = await stores.runs.get(runId);
  if (!rec) throw new RunServiceError("run_not_found", `Run ${runId} not found`);
  if (TERMINAL.has(rec.status)) throw new RunServiceError("run_not_cancellable", `Run ${runId} is not cancellable (status: ${rec.status})`);
  if (!backends.shared) throw new RunServiceError("run_not_active_here", `Run ${runId} is not active on this worker`);
  const lease = await backends.leases.get(runId);
  const now = at.clock();
  const { graceMs, leaseMs } = backends.ownership;
  if (lease && lease.expiresAt + graceMs < now && (await backends.leases.acquire(runId, rec.threadId, backends.ownerId, now + leaseMs, now))) {
    // Its owner died and nobody resumed it yet: it stops here (nothing can undo its last steps, so a rollback
    // ends it as interrupted too) instead of waiting for a takeover that would run it on.
    await endOrphanRun(runId, "interrupted", null, at);
    return false;
  }
  // The owner aborts it when the signal arrives.
  await backends.signals.publish({ type: "cancel", runId, action });
  return true;
}

/**
 * Take what executing a run again here needs: its stored record and
 * execution settings, its lease (this process's now) and, on shared
 * backends, its thread's slot. Throws `run_not_resumable` (with why) when any
 * of them cannot be had; nothing stays taken then.
 */
export async function claimForResume(runId: string, at: CrossProcessContext): Promise<{ record: RunRecord; execution: RunExecution }> {
  const refuse = (why: string) => notResumable(runId, why);
  const { backends } = at;
  const record = await at.stores.runs.get(runId);
  if (!record) throw refuse("it is unknown");
  if (TERMINAL.has(record.status)) throw refuse(`it already ended (status: ${record.status})`);
  // Its input is in no checkpoint yet (and its request, secrets included, is not kept): it cannot be replayed.
  if (record.status === "pending") throw refuse("it was queued and never started");
  const execution = record.execution;
  if (!execution) throw refuse("its settings were not stored");
  const now = at.clock();
  if (!(await backends.leases.acquire(runId, record.threadId, backends.ownerId, now + backends.ownership.leaseMs, now))) {
    throw refuse("another process holds its lease");
  }
  if (backends.shared && !(await at.slots.tryAcquire(record.threadId, runId))) {
    await backends.leases.release(runId, backends.ownerId).catch(() => undefined);
    throw refuse("its thread has another active run");
  }
  return { record, execution };
}

/** The `run_not_resumable` error for `runId`, saying why. */
export function notResumable(runId: string, why: string): RunServiceError {
  return new RunServiceError("run_not_resumable", `Run ${runId} cannot be resumed: ${why}`, { details: { run_id: runId } });
}

/** Wait until a run this process does not execute ended (its stream's end), then return its record. */
export async function waitElsewhere(runId: string, at: CrossProcessContext): Promise<RunRecord | undefined> {
  const record = await at.stores.runs.get(runId);
  if (!record) return undefined;
  if (!TERMINAL.has(record.status) && (await at.bridge.has(runId))) await untilStreamEnd(at.bridge, runId);
  return at.stores.runs.get(runId);
}

/**
 * Free the thread's slot across processes and tell the others: their queued
 * runs for the thread wait for this signal (and re-check on a timer if it is
 * lost). A failure is logged: the slot then expires with its lease.
 */
export function releaseThreadSlot(threadId: string, runId: string, at: Pick<CrossProcessContext, "backends" | "log">): Promise<void> {
  const { backends } = at;
  return backends.lock
    .release(threadId, runId)
    .then(() => backends.signals.publish({ type: "thread_released", threadId }))
    .catch((err: unknown) => at.log(`could not release thread ${threadId}: ${errorMessage(err)}`));
}
