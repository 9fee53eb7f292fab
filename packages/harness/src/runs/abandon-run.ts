import { isoNow } from "../clock";
import { errorMessage, hasErrorCode } from "../errors";
import type { PersistenceStores, RunRecordStatus } from "../persistence";
import type { RunBackends, StreamBridge } from "./backend-types";
import { claimLease } from "./lease-keeper";
import { TERMINAL } from "./local-run";

/** Where an orphaned run is ended. */
export interface OrphanContext {
  stores: PersistenceStores;
  backends: RunBackends;
  bridge: StreamBridge;
  log: (message: string) => void;
  /** Epoch ms, as the leases count time. */
  clock: () => number;
}

/** How an orphaned run ends. */
export interface OrphanEnd {
  status: RunRecordStatus;
  error: string | null;
  /** Publish `error` with this payload before the end marker. */
  event?: { message: string; name: string; code?: string };
  stopReason?: string | null;
  /**
   * The epoch of this process's claim of the run's lease (shared backends):
   * the record is written under it, so a process that lost the lease to a
   * newer claim writes nothing and leaves the run to its new owner.
   */
  epoch?: number;
}

/**
 * End a run no process executes any more: its record and thread get the
 * end's status (with its error and stop reason), its stream the end's
 * `error` event (if any) and the end marker, its lease (this process's by
 * now) and thread slot are released so queued runs go on.
 */
export async function endOrphanRun(runId: string, end: OrphanEnd, at: OrphanContext): Promise<void> {
  const { stores, backends } = at;
  const record = await stores.runs.get(runId);
  if (!record || TERMINAL.has(record.status)) return;
  const ts = isoNow();
  const { status, error } = end;
  const patch = { status, error, ...(end.stopReason !== undefined ? { stopReason: end.stopReason } : {}), updatedAt: ts };
  try {
    await stores.runs.update(runId, patch, backends.shared && end.epoch !== undefined ? { fence: { epoch: end.epoch } } : undefined);
  } catch (err) {
    if (!hasErrorCode(err, "run_stale_owner")) throw err;
    // Another process claimed the run after this one did: ending it is the new owner's to do.
    at.log(`run ${runId} was not ended here: another process owns it now`);
    return;
  }
  // A queued run never made the thread busy: the thread's status is its active run's, not this one's.
  if (record.status !== "pending") await stores.threads.update(record.threadId, { status: status === "success" ? "idle" : status, updatedAt: ts });
  try {
    const writer = await at.bridge.writer(runId, { resume: true });
    if (end.event) writer.publish("error", end.event);
    await writer.end();
  } catch (err) {
    at.log(`could not end the stream of run ${runId}: ${errorMessage(err)}`);
  }
  await backends.leases.release(runId, backends.ownerId).catch(() => undefined);
  if (backends.shared) {
    const holder = await backends.lock.holder(record.threadId).catch(() => undefined);
    if (holder?.runId === runId) {
      await backends.lock.release(record.threadId, runId).catch(() => undefined);
      await backends.signals.publish({ type: "thread_released", threadId: record.threadId }).catch(() => undefined);
    }
  }
}

/** The stop reason of a run that was not executed again because it carried request-scoped secrets. */
export const SECRETS_NOT_RESUMABLE = "secrets_not_resumable";

/**
 * End a run that cannot be resumed (its process died): `error` record and
 * thread with `message`, an `error` event and the end marker on its
 * stream, its lease and thread slot released. The stop reason (and the
 * event's `code`) is `stopReason`: `resume_failed` unless the caller knows
 * better (`secrets_not_resumable`).
 */
export async function abandonRun(runId: string, message: string, at: OrphanContext, stopReason = "resume_failed"): Promise<void> {
  const end: OrphanEnd = { status: "error", error: message, event: { message, name: "RunResumeError", code: stopReason }, stopReason };
  if (at.backends.shared) {
    // Claimed again, for an epoch to write the record under: a process that resumed the run in the meantime holds a
    // newer claim, and then this one must not mark its live run failed.
    const now = at.clock();
    const record = await at.stores.runs.get(runId);
    if (!record) return;
    const claimed = await claimLease(at.backends.leases, runId, record.threadId, at.backends.ownerId, now + at.backends.ownership.leaseMs, now);
    if (!claimed) {
      at.log(`run ${runId} was not ended here: another process holds its lease`);
      return;
    }
    end.epoch = claimed.epoch;
  }
  return endOrphanRun(runId, end, at);
}
