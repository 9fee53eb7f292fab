import type { RunHost } from "./run-host";

/** Checkpoints read per page while looking for where a run began. */
const PAGE = 64;
/** At most this many pages (a run of more steps than that is rolled back to where the walk stopped finding its own). */
const MAX_PAGES = 1000;

/**
 * Restore a thread to `preCheckpointId` (the checkpoint a run started from)
 * with a new checkpoint written as node `rollback`; a run that started on a
 * new thread (`null`) leaves no checkpoint behind.
 */
export async function rollbackThread(host: RunHost, threadId: string, preCheckpointId: string | null): Promise<void> {
  if (preCheckpointId) await host.updateState(threadId, {}, { checkpointId: preCheckpointId, asNode: "rollback" });
  else await host.checkpointer.deleteThread(threadId);
}

/**
 * Roll back a run that no process executes (its owner died), as its owner
 * would have: find the checkpoint before the run's first one — the run's
 * checkpoints are the thread's newest ones, since it held the thread — and
 * restore it. A run that committed nothing leaves the thread as it is.
 */
export async function rollbackRunOf(host: RunHost, threadId: string, runId: string): Promise<void> {
  let before: string | undefined;
  // undefined: no checkpoint of the run seen yet
  let start: string | null | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const records = await host.checkpointer.list(threadId, { limit: PAGE, ...(before ? { before } : {}) });
    for (const record of records) {
      if (record.metadata.run_id !== runId) return start === undefined ? undefined : rollbackThread(host, threadId, start);
      start = record.parentId;
    }
    if (records.length < PAGE) break;
    before = records[records.length - 1].checkpointId;
  }
  if (start !== undefined) await rollbackThread(host, threadId, start);
}
