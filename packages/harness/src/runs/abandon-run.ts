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

/**
 * End a run no process executes any more: its record and thread get
 * `status` (with `error`), its stream an `error` event when `error` is set
 * and the end marker, its lease (this process's by now) and thread slot are
 * released so queued runs go on.
 */
export async function endOrphanRun(runId: string, status: RunRecordStatus, error: string | null, at: OrphanContext): Promise<void> {
  const { stores, backends } = at;
  const record = await stores.runs.get(runId);
  if (!record || TERMINAL.has(record.status)) return;
  const ts = isoNow();
  await stores.runs.update(runId, { status, error, ...(error ? { stopReason: "resume_failed" } : {}), updatedAt: ts });
  await stores.threads.update(record.threadId, { status: status === "success" ? "idle" : status, updatedAt: ts });
  try {
    const writer = await at.bridge.writer(runId, { resume: true });
    if (error) writer.publish("error", { message: error, name: "RunResumeError" });
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

/**
 * End a run that cannot be resumed (its process died): `error` record and
 * thread with `message`, an `error` event and the end marker on its
 * stream, its lease and thread slot released.
 */
export function abandonRun(runId: string, message: string, at: OrphanContext): Promise<void> {
  return endOrphanRun(runId, "error", message, at);
}
