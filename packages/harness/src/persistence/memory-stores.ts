import { compareThreads, matchesMetadata } from "./ordering";
import type {
  MessageRow,
  MessageStore,
  PersistenceStores,
  RunRecord,
  RunStore,
  ThreadRecord,
  ThreadSearch,
  ThreadStore,
} from "./types";

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** `row` with the patch's defined fields: an `undefined` field leaves the stored value, as on SQLite and PostgreSQL. */
function patched<T extends object>(row: T, patch: Partial<T>): T {
  const out: T = { ...row };
  for (const key in patch) {
    const value = patch[key];
    if (value !== undefined) out[key] = value as T[typeof key];
  }
  return out;
}

/** In-process {@link ThreadStore} (for `database.backend: memory` and tests). */
export class MemoryThreadStore implements ThreadStore {
  private readonly rows = new Map<string, ThreadRecord>();

  async create(record: ThreadRecord): Promise<void> {
    if (this.rows.has(record.threadId)) throw new Error(`Thread ${record.threadId} already exists`);
    this.rows.set(record.threadId, clone(record));
  }

  async get(threadId: string): Promise<ThreadRecord | undefined> {
    const r = this.rows.get(threadId);
    return r ? clone(r) : undefined;
  }

  async update(threadId: string, patch: Partial<Omit<ThreadRecord, "threadId" | "createdAt">>): Promise<void> {
    const cur = this.rows.get(threadId);
    if (!cur) return;
    this.rows.set(threadId, clone(patched<ThreadRecord>(cur, patch)));
  }

  async delete(threadId: string): Promise<void> {
    this.rows.delete(threadId);
  }

  async search(f: ThreadSearch): Promise<ThreadRecord[]> {
    return [...this.rows.values()]
      .filter((t) => t.userId === f.userId && (!f.status || t.status === f.status) && matchesMetadata(t.metadata, f.metadata))
      .sort(compareThreads)
      .slice(f.offset, f.offset + f.limit)
      .map(clone);
  }

  async listRunning(): Promise<ThreadRecord[]> {
    return [...this.rows.values()].filter((t) => t.status === "running").map(clone);
  }
}

/** In-process {@link RunStore}. */
export class MemoryRunStore implements RunStore {
  private readonly rows = new Map<string, RunRecord>();

  async create(record: RunRecord): Promise<void> {
    if (this.rows.has(record.runId)) throw new Error(`Run ${record.runId} already exists`);
    this.rows.set(record.runId, clone(record));
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const r = this.rows.get(runId);
    return r ? clone(r) : undefined;
  }

  async update(runId: string, patch: Partial<Omit<RunRecord, "runId" | "threadId" | "createdAt">>): Promise<void> {
    const cur = this.rows.get(runId);
    if (!cur) return;
    this.rows.set(runId, clone(patched<RunRecord>(cur, patch)));
  }

  async listByThread(threadId: string): Promise<RunRecord[]> {
    // Map order is insertion order; a stable sort keeps later inserts first on equal timestamps.
    return [...this.rows.values()]
      .filter((r) => r.threadId === threadId)
      .reverse()
      .sort((a, b) => (a.createdAt === b.createdAt ? 0 : a.createdAt < b.createdAt ? 1 : -1))
      .map(clone);
  }

  async deleteByThread(threadId: string): Promise<void> {
    for (const [id, r] of this.rows) if (r.threadId === threadId) this.rows.delete(id);
  }

  async recoverOrphans(now: string): Promise<RunRecord[]> {
    const out: RunRecord[] = [];
    for (const r of this.rows.values()) {
      if (r.status !== "pending" && r.status !== "running") continue;
      Object.assign(r, { status: "error", stopReason: "orphan_recovered", error: "The server stopped while this run was in progress", updatedAt: now });
      out.push(clone(r));
    }
    return out;
  }
}

/** In-process {@link MessageStore} with a store-global `seq`, like the SQL tables. */
export class MemoryMessageStore implements MessageStore {
  private readonly rows: MessageRow[] = [];
  private nextSeq = 1;

  async record(threadId: string, runId: string, messages: Array<Record<string, unknown>>, createdAt: string): Promise<void> {
    for (const m of messages) {
      const id = typeof m.id === "string" ? m.id : null;
      if (!id) continue;
      const existing = this.rows.find((r) => r.threadId === threadId && r.messageId === id);
      if (existing) existing.content = clone(m);
      else this.rows.push({ seq: this.nextSeq++, threadId, runId, messageId: id, messageType: String(m.type ?? "unknown"), content: clone(m), createdAt });
    }
  }

  async page(threadId: string, options: { limit: number; beforeSeq?: number }): Promise<{ rows: MessageRow[]; hasMore: boolean }> {
    const before = options.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const matching = this.rows.filter((r) => r.threadId === threadId && r.seq < before);
    const hasMore = matching.length > options.limit;
    return { rows: matching.slice(Math.max(0, matching.length - options.limit)).map(clone), hasMore };
  }

  async runIds(threadId: string): Promise<Map<string, string>> {
    return new Map(this.rows.filter((r) => r.threadId === threadId).map((r) => [r.messageId, r.runId]));
  }

  async deleteByThread(threadId: string): Promise<void> {
    for (let i = this.rows.length - 1; i >= 0; i--) if (this.rows[i].threadId === threadId) this.rows.splice(i, 1);
  }
}

/** A fresh set of in-memory stores (nothing survives the process). */
export function createMemoryStores(): PersistenceStores {
  return {
    threads: new MemoryThreadStore(),
    runs: new MemoryRunStore(),
    messages: new MemoryMessageStore(),
    async close() {},
  };
}
