/**
 * The run service's dealings with runs it does not execute itself: a cancel
 * routed to the owning process (or ending a run whose owner died), the
 * claims a resume takes before executing a run again here, waiting for a
 * run that executes elsewhere, and freeing a thread's slot across processes.
 */
import { errorMessage, RunServiceError } from "../errors";
import type { MultitaskStrategy, PersistenceStores, RunExecution, RunRecord } from "../persistence";
import { endOrphanRun } from "./abandon-run";
import type { RunBackends, StreamBridge } from "./backend-types";
import { claimLease } from "./lease-keeper";
import { TERMINAL } from "./local-run";
import { ROLLED_BACK } from "./run-end";
import { carriedSecrets } from "./run-record";
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
  /**
   * Restore the thread to the checkpoint before the run's first one (as a
   * rollback cancel does where the run executes); nothing when the run
   * committed nothing.
   */
  readonly rollbackRun: (threadId: string, runId: string) => Promise<void>;
}

/**
 * Cancel a run this process does not execute. `run_not_found` when unknown,
 * `run_not_cancellable` when already finished, `run_not_active_here` on one
 * process's backends (no other process to signal). A run whose lease expired
 * past grace is ended here, as its owner would have ended it: `interrupted`
 * (its steps stay), or under `rollback` restored to the checkpoint before it
 * and ended `error` "Rolled back by user". Otherwise the owner is signalled.
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
  const claimed = lease && lease.expiresAt + graceMs < now ? await claimLease(backends.leases, runId, rec.threadId, backends.ownerId, now + leaseMs, now) : undefined;
  if (claimed) {
    // Its owner died and nobody resumed it yet: it stops here instead of waiting for a takeover that would run it
    // on. The claim gave the lease a new epoch, so an owner that was only late can commit nothing more; the thread
    // slot stays the run's until it ended, so no queued run starts on a thread being rolled back.
    if (action === "rollback") {
      await at.rollbackRun(rec.threadId, runId);
      await endOrphanRun(runId, { status: "error", error: ROLLED_BACK, epoch: claimed.epoch }, at);
    } else {
      await endOrphanRun(runId, { status: "interrupted", error: null, epoch: claimed.epoch }, at);
    }
    return false;
  }
  // The owner aborts it when the signal arrives.
  await backends.signals.publish({ type: "cancel", runId, action });
  return true;
}

/** What a resume claimed: the run's record and settings, and the epoch of this process's claim of its lease. */
export interface ResumeClaim {
  record: RunRecord;
  execution: RunExecution;
  epoch: number | undefined;
}

/**
 * Take what executing a run again here needs: its stored record and
 * execution settings, its lease (this process's now, with a new epoch) and,
 * on shared backends, its thread's slot — except for a queued run, which
 * waits for the slot in its turn when it starts. Throws `run_not_resumable`
 * (with why) when any of them cannot be had, `run_secrets_not_resumable`
 * for a run that carried request-scoped secrets (they are never stored, and
 * running without them would silently run a different request); nothing
 * stays taken then.
 */
export async function claimForResume(runId: string, at: CrossProcessContext): Promise<ResumeClaim> {
  const refuse = (why: string) => notResumable(runId, why);
  const { backends } = at;
  const record = await at.stores.runs.get(runId);
  if (!record) throw refuse("it is unknown");
  if (TERMINAL.has(record.status)) throw refuse(`it already ended (status: ${record.status})`);
  const execution = record.execution;
  if (!execution) throw refuse("its settings were not stored");
  const queued = record.status === "pending";
  // A queued run's input is in no checkpoint yet: without the stored copy there is nothing to start it with.
  if (queued && !execution.input) throw refuse("it was queued and its input was not stored");
  const secrets = carriedSecrets(execution);
  if (secrets.length) {
    throw new RunServiceError(
      "run_secrets_not_resumable",
      `Run ${runId} cannot be resumed by another server process: its request carried secrets (${secrets.join(", ")}), which are never stored; send the request again`,
      { details: { run_id: runId, secret_names: secrets } },
    );
  }
  const now = at.clock();
  const claimed = await claimLease(backends.leases, runId, record.threadId, backends.ownerId, now + backends.ownership.leaseMs, now);
  if (!claimed) throw refuse("another process holds its lease");
  if (backends.shared && !queued && !(await at.slots.tryAcquire(record.threadId, runId))) {
    await backends.leases.release(runId, backends.ownerId).catch(() => undefined);
    throw refuse("its thread has another active run");
  }
  return { record, execution, epoch: claimed.epoch };
}

/**
 * A new run's claims on shared backends before its record is written: its
 * thread's slot (as its strategy says, see `SlotWaiter.claim`; `remoteWait`
 * when it must wait for another process's run) and its lease. A failed lease
 * claim gives the slot back and throws.
 */
export async function reserveNewRun(
  threadId: string,
  runId: string,
  strategy: MultitaskStrategy,
  at: CrossProcessContext,
): Promise<{ remoteWait: boolean; leased: { epoch: number | undefined } }> {
  const { backends } = at;
  const remoteWait = !(await at.slots.claim(threadId, runId, strategy));
  try {
    const now = at.clock();
    const leased = await claimLease(backends.leases, runId, threadId, backends.ownerId, now + backends.ownership.leaseMs, now);
    if (!leased) throw new RunServiceError("run_backend_failed", `The lease of run ${runId} is held by another process`);
    return { remoteWait, leased };
  } catch (err) {
    if (!remoteWait) await backends.lock.release(threadId, runId).catch(() => undefined);
    throw err;
  }
}

/** The `run_not_resumable` error for `runId`, saying why. */
export function notResumable(runId: string, why: string): RunServiceError {
  return new RunServiceError("run_not_resumable", `Run ${runId} cannot be resumed: ${why}`, { details: { run_id: runId } });
}

/** Wait until a run this process does not execute ended (its stream's end), then return its record. */
export async function waitElsewhere(runId: string, at: CrossProcessContext): Promise<RunRecord | undefined> {
  const record = await at.stores.runs.get(runId);
  if (!record) return undefined;
  // On shared backends a run that has not ended has a stream to wait on even before its first event reached the
  // bridge (its owner shows it to its own clients first), and every run's stream gets an end marker.
  if (!TERMINAL.has(record.status) && (at.backends.shared || (await at.bridge.has(runId)))) await untilStreamEnd(at.bridge, runId);
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
