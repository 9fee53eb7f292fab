/** sessionStorage bookkeeping of the active run per thread (`lg:stream:{threadId}` → run id), like useStream. */

/** Minimal storage interface (sessionStorage in the browser; a Map-backed fake in tests). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The storage key for a thread's active run. */
export function streamKey(threadId: string): string {
  return `lg:stream:${threadId}`;
}

/** Remembers the active run of a thread so a reload can re-join it. */
export function rememberRun(storage: KeyValueStorage, threadId: string, runId: string): void {
  storage.setItem(streamKey(threadId), runId);
}

/** The remembered active run of a thread, if any. */
export function recalledRun(storage: KeyValueStorage, threadId: string): string | undefined {
  return storage.getItem(streamKey(threadId)) ?? undefined;
}

/** Forgets a thread's active run (after the stream ended). */
export function forgetRun(storage: KeyValueStorage, threadId: string): void {
  storage.removeItem(streamKey(threadId));
}

/** Run statuses after which a join is pointless. */
export const TERMINAL_RUN_STATUSES = new Set(["success", "error", "timeout", "interrupted"]);
