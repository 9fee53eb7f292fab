import type Database from "better-sqlite3";
import path from "node:path";
import { ValidationError } from "../errors";
import { InlineWriter, SqliteWriterWorker, writerWorkerWanted } from "./writer";
import type { RanOutcome, WriteStep } from "./writer";

export type { WriteStep } from "./writer";

/**
 * How long writes may wait to share a commit while the database is busy
 * (group commit). Each commit rewrites every page it touched, so under load
 * one commit per window instead of one per event-loop turn saves most of
 * the SQLite cost; an idle database still commits on the next turn.
 */
export const DEFAULT_COMMIT_WINDOW_MS = 2;

/**
 * After a window that gathered a single write, how many windows' time the
 * batcher commits on the next turn before it waits for a window again. A lone
 * write per window is one writer awaiting each of its commits (a run's turns
 * one after another): waiting only delays it, there is nothing to group. The
 * next try comes this many windows later, so a busy server is back to one
 * commit per window after at most that long.
 */
const WINDOWS_BEFORE_RETRY = 25;

/**
 * The largest batch committed on the calling thread when the writer thread
 * is idle (a lone run's turn queues a handful of checkpoints). Larger batches
 * mean many runs are writing: they go to the writer thread, so the commits of
 * a busy server stay off the event loop.
 */
const INLINE_MAX_WRITES = 8;

/**
 * After a sign of many writers (a batch larger than {@link INLINE_MAX_WRITES},
 * or writes queued while a batch is on the writer thread), how many windows'
 * time every batch goes to the writer thread, so a busy server's small batches
 * between bursts do not take the event loop's time either.
 */
const WINDOWS_OF_BUSY = 50;

/**
 * How many batches in a row, each committed within {@link BACK_TO_BACK_WINDOWS}
 * windows of the one before and touching none of its rows, mean many writers.
 * One run's batches share its rows (its thread's checkpoints, its run record),
 * so runs one after another give at most one such batch in a row; a burst of
 * runs being admitted (each request's writes committed on their own, small)
 * gives one after another.
 */
const DISJOINT_BATCHES_OF_MANY = 2;

/** See {@link DISJOINT_BATCHES_OF_MANY}. */
const BACK_TO_BACK_WINDOWS = 2;

/** Options of {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /** Minimum time between two commits of queued writes (default {@link DEFAULT_COMMIT_WINDOW_MS}; 0 = every turn). */
  commitWindowMs?: number;
  /**
   * Run the statements on a worker thread with its own connection (default:
   * yes for a database file, unless `DEERFLOW_SQLITE_INLINE_WRITES` is set;
   * never for `:memory:`, which a second connection cannot see).
   */
  worker?: boolean;
}

interface Item {
  steps: WriteStep[];
  resolve(): void;
  reject(e: unknown): void;
}

/**
 * The write queue of one SQLite connection, shared by every store on it.
 *
 * Writes are grouped into one transaction: one WAL commit instead of one per
 * statement. Writes queued while the writer thread is idle, or while the last
 * commit is older than the commit window, are committed on the next
 * event-loop turn; writes queued sooner while a batch is still on its way wait
 * for the window to end, so a busy server commits at most once per window.
 * A window that gathered one write only means one writer is awaiting each
 * commit in turn: for the next {@link WINDOWS_BEFORE_RETRY} windows' time,
 * writes commit on the next turn again instead of waiting for nothing.
 * Batches commit in the order they were queued. On a database file the
 * statements run on a worker thread (its own connection, WAL), so a busy
 * server's commits do not take the event loop's time; a small batch queued
 * while that thread is idle (a lone run's step, waiting for it) commits on
 * the main connection instead, which is quicker than two thread switches —
 * unless many writers were seen lately (a large batch, writes queued while one
 * is on the writer thread, or small batches back to back that share no row):
 * then the writes of a burst go to the writer thread and share its commits.
 *
 * A write's promise resolves after its transaction committed; a failing
 * statement rejects only its own write. Reads call {@link settle} with the
 * row key they read, which commits the pending writes of that row first, so
 * a read never sees a row older than a write that was already queued.
 */
export class WriteBatcher {
  private queue: Item[] = [];
  /** Rows with queued writes (`thread:<id>`, `run:<id>`…); `*` = a write touching unknown rows. */
  private queueKeys = new Set<string>();
  /** Batches handed to the worker and not committed yet, with the rows they touch. */
  private readonly inflight = new Set<{ keys: Set<string>; done: Promise<void> }>();
  private scheduled = false;
  /** The scheduled flush waits for the window (a timer), rather than the next turn. */
  private timed = false;
  private lastCommit = 0;
  /** Until then writes commit on the next turn: the last window gathered nothing to group. */
  private noWindowUntil = 0;
  /** Until then every batch goes to the writer thread: many writers were seen (see {@link WINDOWS_OF_BUSY}). */
  private busyUntil = 0;
  /** The rows of the last batch, and how many batches in a row touched none of the previous one's rows. */
  private lastKeys: ReadonlySet<string> = new Set(["*"]);
  private disjointBatches = 0;
  private readonly windowMs: number;
  private readonly inline: InlineWriter;
  private worker: SqliteWriterWorker | undefined;
  private workerWanted: boolean;
  /** The database file, resolved now: the writer thread opens it later, maybe after a change of directory. */
  private readonly dbPath: string;

  constructor(
    private readonly db: Database.Database,
    options: WriteBatcherOptions = {},
  ) {
    const w = options.commitWindowMs ?? DEFAULT_COMMIT_WINDOW_MS;
    if (!Number.isFinite(w) || w < 0) {
      throw new ValidationError(`WriteBatcher: commitWindowMs must be a number ≥ 0, got ${String(w)}`, { code: "invalid_commit_window" });
    }
    this.windowMs = w;
    this.inline = new InlineWriter(db);
    this.workerWanted = writerWorkerWanted(db, options.worker);
    this.dbPath = this.workerWanted ? path.resolve(db.name) : db.name;
  }

  /** True when statements run on the writer thread (false: on the calling thread). */
  get offThread(): boolean {
    return this.workerWanted;
  }

  /** Queue one write (one or more statements that succeed or fail together); `keys` name the rows it touches. */
  write(steps: WriteStep | WriteStep[], keys: string[] = ["*"]): Promise<void> {
    for (const k of keys) this.queueKeys.add(k);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ steps: Array.isArray(steps) ? steps : [steps], resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const now = performance.now();
    // With a writer thread, an idle writer (no batch on its way) means nobody is competing for commits: the writes
    // queued now are one run's turn, which awaits them, and waiting for the window would only delay it.
    const busy = !this.workerWanted || this.inflight.size > 0;
    const wait = !busy || now < this.noWindowUntil ? 0 : this.lastCommit + this.windowMs - now;
    this.timed = wait > 0;
    if (wait <= 0) setImmediate(() => this.flush());
    else setTimeout(() => this.flush(), Math.ceil(wait));
  }

  /**
   * Before reading `key`: commit the queued writes if one touches it, and wait
   * for those already on their way. Resolves at once (nothing pending) in
   * most cases.
   */
  settle(key: string): Promise<void> {
    if (this.queueKeys.has(key) || this.queueKeys.has("*")) this.flush();
    if (!this.inflight.size) return Promise.resolve();
    const waits: Array<Promise<void>> = [];
    for (const b of this.inflight) if (b.keys.has(key) || b.keys.has("*")) waits.push(b.done);
    return waits.length ? Promise.all(waits).then(() => undefined) : Promise.resolve();
  }

  /** Commit (or hand to the writer thread) every queued write now. */
  flush(): void {
    const waited = this.timed;
    this.scheduled = false;
    this.timed = false;
    if (!this.queue.length || !this.db.open) return;
    const batch = this.queue;
    const keys = this.queueKeys;
    this.queue = [];
    this.queueKeys = new Set();
    const previous = this.lastCommit;
    this.lastCommit = performance.now();
    const backToBack = this.lastCommit - previous <= BACK_TO_BACK_WINDOWS * Math.max(this.windowMs, 1);
    this.disjointBatches = backToBack && !sharesRow(keys, this.lastKeys) ? this.disjointBatches + 1 : 0;
    this.lastKeys = keys;
    if (waited && batch.length === 1) this.noWindowUntil = this.lastCommit + WINDOWS_BEFORE_RETRY * this.windowMs;
    if (!this.workerWanted) {
      settleItems(batch, this.inline.run(batch.map((i) => i.steps)));
      return;
    }
    if (this.inflight.size || batch.length > INLINE_MAX_WRITES || this.disjointBatches >= DISJOINT_BATCHES_OF_MANY) this.busyUntil = this.lastCommit + WINDOWS_OF_BUSY * Math.max(this.windowMs, 1);
    else if (this.lastCommit >= this.busyUntil) {
      // The writer thread is idle, the batch is small and no burst of writers was seen lately: one run's step,
      // which is waiting for this commit. Here it costs about what handing it over costs, and the run does not
      // wait for two thread switches. Only if the write lock is free at once (another process may hold it; this
      // thread never waits for it).
      const outcome = this.inline.tryRun(batch.map((i) => i.steps));
      if (outcome.kind !== "not-run") {
        settleItems(batch, outcome);
        return;
      }
    }
    this.worker ??= new SqliteWriterWorker(this.dbPath, () => this.workerFailed());
    const entry = { keys, done: Promise.resolve() };
    entry.done = this.worker.run(batch.map((i) => i.steps)).then(
      (outcome) => {
        this.inflight.delete(entry);
        if (outcome.kind === "not-run") {
          // The writer never opened the database: nothing of this batch ran, so it runs here instead.
          settleItems(batch, this.inline.run(batch.map((i) => i.steps)));
        } else {
          settleItems(batch, outcome);
        }
      },
      (err: unknown) => {
        this.inflight.delete(entry);
        for (const item of batch) item.reject(err);
      },
    );
    this.inflight.add(entry);
  }

  /** Commit everything queued and wait until every write handed out so far has settled. */
  async drain(): Promise<void> {
    this.flush();
    while (this.inflight.size) await Promise.all([...this.inflight].map((b) => b.done));
  }

  /**
   * Drain, then stop the writer thread and release its connection (call
   * before closing the database). A later write starts a new writer.
   */
  async close(): Promise<void> {
    await this.drain();
    const worker = this.worker;
    this.worker = undefined;
    await worker?.close();
  }

  /** The writer thread stopped or could not open the database: later batches run on this thread. */
  private workerFailed(): void {
    this.workerWanted = false;
    this.worker = undefined;
  }
}

/**
 * Whether two batches touch a common row: a key naming a row (`thread:<id>`,
 * `checkpoints:<id>`…) in both, or `*` (unknown rows) in either. The
 * table-wide keys (`threads-any`, `runs-any`) every write of a table carries
 * say nothing about who wrote.
 */
function sharesRow(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.has("*") || b.has("*")) return true;
  for (const k of a) if (b.has(k) && !k.endsWith("-any")) return true;
  return false;
}

/** Resolve or reject each write of a batch that ran (a batch that did not run is run again instead). */
function settleItems(batch: Item[], outcome: RanOutcome): void {
  if (outcome.kind === "failed") {
    for (const item of batch) item.reject(outcome.error);
    return;
  }
  batch.forEach((item, i) => {
    const err = outcome.errors.get(i);
    if (err) item.reject(err);
    else item.resolve();
  });
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
