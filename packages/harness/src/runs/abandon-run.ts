import { isoNow } from "../clock";
import { errorMessage } from "../errors";
import type { PersistenceStores, RunRecordStatus } from "../persistence";
import type { RunBackends, StreamBridge } from "./backend-types";
import { TERMINAL } from "./local-run";

/** Where an orphaned run is ended. */
export interface OrphanContext {
  stores: PersistenceStores;
  backends: RunBackends;
  bridge: StreamBridge;
  log: (message: string) => void;
}

/** How an orphaned run ends. */
export interface OrphanEnd {
  status: RunRecordStatus;
  error: string | null;
  /** Publish `error` with this payload before the end marker. */
  event?: { message: string; name: string; code?: string };
  stopReason?: string | null;
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
  await stores.runs.update(runId, { status, error, ...(end.stopReason !== undefined ? { stopReason: end.stopReason } : {}), updatedAt: ts });
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
export function abandonRun(runId: string, message: string, at: OrphanContext, stopReason = "resume_failed"): Promise<void> {
  return endOrphanRun(runId, { status: "error", error: message, event: { message, name: "RunResumeError", code: stopReason }, stopReason }, at);
}
