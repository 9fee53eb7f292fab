import { isoNow } from "../clock";
import { errorMessage } from "../errors";
import type { PersistenceStores } from "../persistence";
import type { RunBackends, StreamBridge } from "./backend-types";
import { TERMINAL } from "./local-run";

/**
 * End a run that cannot be resumed (its process died): `error` record and
 * thread with `message`, an `error` event and the end marker on its
 * stream, its lease (held by `ownerId`) and thread slot released.
 */
export async function abandonRun(
  runId: string,
  message: string,
  at: { stores: PersistenceStores; backends: RunBackends; bridge: StreamBridge; log: (message: string) => void },
): Promise<void> {
  const { stores, backends } = at;
  const record = await stores.runs.get(runId);
  if (!record || TERMINAL.has(record.status)) return;
  const ts = isoNow();
  await stores.runs.update(runId, { status: "error", error: message, stopReason: "resume_failed", updatedAt: ts });
  await stores.threads.update(record.threadId, { status: "error", updatedAt: ts });
  try {
    const writer = await at.bridge.writer(runId, { resume: true });
    writer.publish("error", { message, name: "RunResumeError" });
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
