import type { ThreadRecord } from "./types";

/** True when every key of `filter` equals (JSON-wise) the same metadata key. */
export function matchesMetadata(meta: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  for (const [k, v] of Object.entries(filter)) {
    if (JSON.stringify(meta[k]) !== JSON.stringify(v)) return false;
  }
  return true;
}

/** Sidebar order: pinned first, then `updatedAt` desc, then thread id desc. */
export function compareThreads(a: ThreadRecord, b: ThreadRecord): number {
  const pa = a.metadata.deerflow_pinned === true ? 1 : 0;
  const pb = b.metadata.deerflow_pinned === true ? 1 : 0;
  if (pa !== pb) return pb - pa;
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.threadId < b.threadId ? 1 : a.threadId > b.threadId ? -1 : 0;
}
