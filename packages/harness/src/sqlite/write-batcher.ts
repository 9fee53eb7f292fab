import type Database from "better-sqlite3";

/**
 * Groups the writes issued in one tick (many concurrent runs) into a single
 * transaction: one WAL commit instead of one per statement. A write's promise
 * resolves after its transaction committed; reads flush pending writes first.
 */
export class WriteBatcher {
  private queue: Array<{ fn: () => void; resolve(): void; reject(e: unknown): void }> = [];
  private scheduled = false;
  /** Rows with pending writes (`thread:<id>`, `run:<id>`…); `*` = a write touching unknown rows. */
  private readonly pendingKeys = new Set<string>();
  /** Runs a batch in one transaction (built once: `db.transaction()` is not free). */
  private readonly runBatch: (batch: Array<{ fn: () => void }>, errors: Map<number, unknown>) => void;

  constructor(private readonly db: Database.Database) {
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
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commit now only if a pending write touches `key` (reads of other rows need not split the batch). */
  flushIfPending(key: string): void {
    if (this.pendingKeys.has(key) || this.pendingKeys.has("*")) this.flush();
  }

  flush(): void {
    this.scheduled = false;
    if (!this.queue.length || !this.db.open) return;
    const batch = this.queue;
    this.queue = [];
    this.pendingKeys.clear();
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
