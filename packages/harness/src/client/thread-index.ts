import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";

/** One thread the embedded client has run. */
export interface ThreadIndexEntry {
  thread_id: string;
  created_at: string;
  updated_at: string;
  status: string;
  title: string | null;
  metadata: Record<string, unknown>;
}

/**
 * A small JSON index of the threads the embedded client created (checkpoint
 * stores have no thread listing). Written atomically (temp file + rename).
 */
export class ThreadIndex {
  constructor(readonly file: string) {}

  private read(): Record<string, ThreadIndexEntry> {
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as { threads?: Record<string, ThreadIndexEntry> };
      return parsed.threads && typeof parsed.threads === "object" ? parsed.threads : {};
    } catch {
      return {};
    }
  }

  private write(threads: Record<string, ThreadIndexEntry>): void {
    mkdirSync(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, threads }, null, 2));
    renameSync(tmp, this.file);
  }

  /** Entry of one thread. */
  get(threadId: string): ThreadIndexEntry | undefined {
    return this.read()[threadId];
  }

  /** Create or update an entry. */
  upsert(threadId: string, patch: Partial<Omit<ThreadIndexEntry, "thread_id">>): ThreadIndexEntry {
    const all = this.read();
    const now = new Date().toISOString();
    const prev = all[threadId];
    const next: ThreadIndexEntry = {
      thread_id: threadId,
      created_at: prev?.created_at ?? now,
      updated_at: patch.updated_at ?? now,
      status: patch.status ?? prev?.status ?? "idle",
      title: patch.title !== undefined ? patch.title : (prev?.title ?? null),
      metadata: { ...(prev?.metadata ?? {}), ...(patch.metadata ?? {}) },
    };
    all[threadId] = next;
    this.write(all);
    return next;
  }

  /** Newest first (`updated_at` desc, then id desc). */
  list(limit = 10): ThreadIndexEntry[] {
    return Object.values(this.read())
      .sort((a, b) => (a.updated_at === b.updated_at ? b.thread_id.localeCompare(a.thread_id) : b.updated_at.localeCompare(a.updated_at)))
      .slice(0, limit);
  }
}
