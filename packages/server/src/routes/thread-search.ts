import type { ThreadRecord, ThreadSearch, ThreadStore } from "@deerflow-ts/harness";

/** The fields of a thread answer (what `POST /threads/search` `select` may name). */
export const THREAD_FIELDS = ["thread_id", "status", "created_at", "updated_at", "metadata", "values", "interrupts"] as const;

/** What LangGraph's thread search adds to the store's filter. */
export interface ThreadSearchExtras {
  /** Only these thread ids. */
  ids?: string[];
  sortBy?: "thread_id" | "status" | "created_at" | "updated_at";
  sortOrder?: "asc" | "desc";
}

const SORT_KEY: Record<NonNullable<ThreadSearchExtras["sortBy"]>, keyof ThreadRecord> = {
  thread_id: "threadId",
  status: "status",
  created_at: "createdAt",
  updated_at: "updatedAt",
};

/**
 * Search the caller's threads with LangGraph's `ids`, `sort_by` and `sort_order`. The store's own order (pinned
 * first, then the latest update) is what no sort and `updated_at desc` mean, so those page in the store; `ids` or
 * another order read every matching row and page here. Ties keep the store's order.
 */
export async function searchThreads(store: ThreadStore, filter: ThreadSearch, extras: ThreadSearchExtras): Promise<ThreadRecord[]> {
  const storeOrder = !extras.sortBy || (extras.sortBy === "updated_at" && (extras.sortOrder ?? "desc") === "desc");
  if (storeOrder && !extras.ids) return store.search(filter);
  let rows = await store.search({ ...filter, limit: Number.MAX_SAFE_INTEGER, offset: 0 });
  if (extras.ids) {
    const wanted = new Set(extras.ids);
    rows = rows.filter((r) => wanted.has(r.threadId));
  }
  if (!storeOrder) {
    const key = SORT_KEY[extras.sortBy!];
    const sign = (extras.sortOrder ?? "desc") === "asc" ? 1 : -1;
    rows = rows
      .map((r, i) => ({ r, i }))
      .sort((a, b) => {
        const x = String(a.r[key]);
        const y = String(b.r[key]);
        return x === y ? a.i - b.i : x < y ? -sign : sign;
      })
      .map((e) => e.r);
  }
  return rows.slice(filter.offset, filter.offset + filter.limit);
}
