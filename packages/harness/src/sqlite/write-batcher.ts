import type Database from "better-sqlite3";

/**
 * How long writes may wait to share a commit while the database is busy
 * (group commit). Each commit rewrites every page it touched, so under load
 * one commit per window instead of one per event-loop turn saves most of
 * the SQLite cost; an idle database still commits on the next turn.
 */
export const DEFAULT_COMMIT_WINDOW_MS = 2;

/** Options of {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /** Minimum time between two commits of queued writes (default {@link DEFAULT_COMMIT_WINDOW_MS}; 0 = every turn). */
  commitWindowMs?: number;
}

/**
 * Groups writes into one transaction: one WAL commit instead of one per
 * statement. Writes queued while the last commit is older than the commit
 * window are committed on the next event-loop turn; writes queued sooner
 * wait for the window to end, so a busy server commits at most once per
 * window. A write's promise resolves after its transaction committed; reads
 * commit the pending writes they depend on first, so they never see stale rows.
 */
export class WriteBatcher {
  private queue: Array<{ fn: () => void; resolve(): void; reject(e: unknown): void }> = [];
  private scheduled = false;
  private lastCommit = 0;
  private readonly windowMs: number;
  /** Rows with pending writes (`thread:<id>`, `run:<id>`…); `*` = a write touching unknown rows. */
  private readonly pendingKeys = new Set<string>();
  /** Runs a batch in one transaction (built once: `db.transaction()` is not free). */
  private readonly runBatch: (batch: Array<{ fn: () => void }>, errors: Map<number, unknown>) => void;

  constructor(
    private readonly db: Database.Database,
    options: WriteBatcherOptions = {},
  ) {
    const w = options.commitWindowMs ?? DEFAULT_COMMIT_WINDOW_MS;
    if (!Number.isFinite(w) || w < 0) throw new RangeError(`commitWindowMs must be a number ≥ 0, got ${String(w)}`);
    this.windowMs = w;
    this.runBatch = db.transaction((batch: Array<{ fn: () => void }>, errors: Map<number, unknown>) => {
      batch.forEach((w, i) => {
        try {
          w.fn();
        } catch (err) {
          errors.set(i, err); // one bad statement fails only its own caller
        }
      });
    });
  }

  write(fn: () => void, keys: string[] = ["*"]): Promise<void> {
    for (const k of keys) this.pendingKeys.add(k);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ fn, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = this.lastCommit + this.windowMs - performance.now();
    if (wait <= 0) setImmediate(() => this.flush());
    else setTimeout(() => this.flush(), Math.ceil(wait));
  }

  /** Commit now only if a pending write touches `key` (reads of other rows need not split the batch). */
  flushIfPending(key: string): void {
    if (this.pendingKeys.has(key) || this.pendingKeys.has("*")) this.flush();
  }

  /** Commit every queued write now (a scheduled commit then finds nothing to do). */
  flush(): void {
    this.scheduled = false;
    if (!this.queue.length || !this.db.open) return;
    const batch = this.queue;
    this.queue = [];
    this.pendingKeys.clear();
    this.lastCommit = performance.now();
    const errors = new Map<number, unknown>();
    try {
      this.runBatch(batch, errors);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => (errors.has(i) ? w.reject(errors.get(i)) : w.resolve()));
  }
}

const batchers = new WeakMap<Database.Database, WriteBatcher>();

/** The shared batcher of a database (one per connection, so every store on it batches together). */
export function batcherFor(db: Database.Database): WriteBatcher {
  let b = batchers.get(db);
  if (!b) {
    b = new WriteBatcher(db);
    batchers.set(db, b);
  }
  return b;
}
