import type Database from "better-sqlite3";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { readEnv } from "../config/env-names";

const requireFromHere = createRequire(import.meta.url);

/**
 * One SQL statement of a write, with its parameters (strings, numbers,
 * bigints, buffers or null; or one object of named `@parameters`). `params` may be a function: it is called when
 * the batch is committed, not when the write is queued, so serialising a row
 * (the JSON of a record or of a checkpoint delta) happens after the request
 * that queued it has reached its model call. It must only read values that
 * no longer change; if it throws, that write fails alone.
 */
export interface WriteStep {
  sql: string;
  params: readonly unknown[] | (() => readonly unknown[]);
  /**
   * When set, the statement must change at least one row; if it changes none
   * the write fails with this message (e.g. an `INSERT … SELECT … WHERE` whose
   * condition did not hold), and its other statements are undone.
   */
  mustChange?: string;
}

/**
 * A step whose parameters are computed at commit (see {@link WriteStep}).
 * A call rather than a literal `{ params: () => … }`: the TypeScript loader
 * names every arrow function written as a property, at each creation.
 */
export function deferredStep(sql: string, params: () => readonly unknown[], mustChange?: string): WriteStep {
  return mustChange ? { sql, params, mustChange } : { sql, params };
}

/** The parameters of a step (calling a deferred `params`). */
export function stepParams(step: WriteStep): readonly unknown[] {
  return typeof step.params === "function" ? step.params() : step.params;
}

/** What became of one batch (a list of writes committed in one transaction). */
export type BatchOutcome =
  /** Committed; the writes listed in `errors` (by index) failed and changed nothing. */
  | { kind: "done"; errors: Map<number, Error> }
  /** The transaction failed as a whole: nothing of the batch is stored. */
  | { kind: "failed"; error: Error }
  /** Never started (the writer thread could not open the database). */
  | { kind: "not-run" };

/** The outcome of a batch that ran. */
export type RanOutcome = Exclude<BatchOutcome, { kind: "not-run" }>;

/** Code of the error a {@link WriteStep.mustChange} statement fails with. */
export const UNCHANGED_WRITE_CODE = "DEERFLOW_WRITE_UNCHANGED";

function unchangedError(message: string): Error {
  return Object.assign(new Error(message), { code: UNCHANGED_WRITE_CODE });
}

/** A SQLite error rebuilt from what the writer thread reported (same `name`, `message` and `code` as better-sqlite3's). */
function sqliteError(message: string, code: string | undefined): Error {
  const err = new Error(message) as Error & { code?: string };
  if (code !== UNCHANGED_WRITE_CODE) err.name = "SqliteError";
  if (code) err.code = code;
  return err;
}

/**
 * Whether a batcher should write through a worker thread: only for a
 * database file (a second connection cannot see `:memory:`), not when the
 * caller or `DEER_FLOW_SQLITE_INLINE_WRITES` says otherwise.
 */
export function writerWorkerWanted(db: Database.Database, requested: boolean | undefined): boolean {
  if (db.memory || db.readonly || !db.name || db.name === ":memory:") return false;
  if (requested !== undefined) return requested;
  return !readEnv("DEER_FLOW_SQLITE_INLINE_WRITES");
}

/** Runs batches on the calling thread's connection (`:memory:` databases, or when the writer thread is off). */
export class InlineWriter {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly runBatch: Database.Transaction<(items: WriteStep[][], errors: Map<number, Error>) => void>;
  private readonly runItem: (steps: WriteStep[]) => void;

  constructor(private readonly db: Database.Database) {
    const stmt = (sql: string) => {
      let s = this.statements.get(sql);
      if (!s) {
        s = db.prepare(sql);
        this.statements.set(sql, s);
      }
      return s;
    };
    // A write of several statements runs in a savepoint, so it succeeds or fails as a whole.
    const runStep = (step: WriteStep) => {
      if (stmt(step.sql).run(...stepParams(step)).changes === 0 && step.mustChange) throw unchangedError(step.mustChange);
    };
    this.runItem = db.transaction((steps: WriteStep[]) => {
      for (const step of steps) runStep(step);
    });
    this.runBatch = db.transaction((items: WriteStep[][], errors: Map<number, Error>) => {
      items.forEach((steps, i) => {
        try {
          if (steps.length === 1) runStep(steps[0]);
          else this.runItem(steps);
        } catch (err) {
          errors.set(i, err instanceof Error ? err : new Error(String(err))); // one bad write fails only its own caller
        }
      });
    });
  }

  run(items: WriteStep[][]): RanOutcome {
    const errors = new Map<number, Error>();
    try {
      this.runBatch(items, errors);
    } catch (err) {
      return { kind: "failed", error: err instanceof Error ? err : new Error(String(err)) };
    }
    return { kind: "done", errors };
  }

  /**
   * Run a batch here only if the database's write lock is free at once
   * (another connection, e.g. another process, may hold it): this thread
   * never waits for a lock. `not-run` when it was taken; nothing ran then.
   */
  tryRun(items: WriteStep[][]): BatchOutcome {
    const errors = new Map<number, Error>();
    const lock = this.lockWait();
    lock.none.get();
    try {
      // IMMEDIATE takes the write lock before the first statement: a busy database fails the batch as a whole.
      this.runBatch.immediate(items, errors);
    } catch (err) {
      if (isBusy(err)) return { kind: "not-run" };
      return { kind: "failed", error: err instanceof Error ? err : new Error(String(err)) };
    } finally {
      lock.restore.get();
    }
    return { kind: "done", errors };
  }

  private lock: { none: Database.Statement; restore: Database.Statement } | undefined;

  /** Statements that turn the connection's busy wait off and back to what it was. */
  private lockWait(): { none: Database.Statement; restore: Database.Statement } {
    if (!this.lock) {
      const was = Number(this.db.pragma("busy_timeout", { simple: true })) || 0;
      // Plucked: the pragma's one value, not a row object, is what each commit pays for twice.
      this.lock = { none: this.db.prepare("PRAGMA busy_timeout = 0").pluck(), restore: this.db.prepare(`PRAGMA busy_timeout = ${was}`).pluck() };
    }
    return this.lock;
  }
}

/** A SQLite "database is locked / busy" error (the write lock is held by another connection). */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && (code === "SQLITE_BUSY" || code.startsWith("SQLITE_BUSY_") || code === "SQLITE_LOCKED");
}

/**
 * The writer thread: its own connection to the database file, one
 * transaction per batch, batches in the order they arrive. It reports per
 * write which ones failed.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  // Atomic commits without an fsync per commit, as on the main connection (a per-connection setting).
  db.pragma("synchronous = NORMAL");
} catch (err) {
  parentPort.postMessage({ type: "open-error", message: String(err && err.message || err) });
  process.exit(0);
}
const statements = new Map();
const stmt = (sql) => {
  let s = statements.get(sql);
  if (!s) { s = db.prepare(sql); statements.set(sql, s); }
  return s;
};
const runStep = (sqls, [i, params, mustChange]) => {
  if (stmt(sqls[i]).run(...params).changes === 0 && mustChange) throw Object.assign(new Error(mustChange), { code: workerData.unchangedCode });
};
const runItem = db.transaction((sqls, steps) => { for (const step of steps) runStep(sqls, step); });
const runBatch = db.transaction((sqls, items, errors) => {
  items.forEach((steps, i) => {
    try {
      if (steps.length === 1) runStep(sqls, steps[0]);
      else if (steps.length) runItem(sqls, steps);
    } catch (err) {
      errors.push([i, String(err && err.message || err), err && err.code]);
    }
  });
});
parentPort.on("message", (m) => {
  if (m.type === "close") {
    try { db.close(); } catch {}
    parentPort.close();
    return;
  }
  const errors = [];
  try {
    runBatch(m.sqls, m.items, errors);
    parentPort.postMessage({ type: "done", id: m.id, errors });
  } catch (err) {
    parentPort.postMessage({ type: "failed", id: m.id, message: String(err && err.message || err), code: err && err.code });
  }
});
`;

type WorkerReply =
  | { type: "done"; id: number; errors: Array<[number, string, string | undefined]> }
  | { type: "failed"; id: number; message: string; code?: string }
  | { type: "open-error"; message: string };

/**
 * A worker thread that commits batches for one database file. The process
 * is kept alive while a batch is in flight (so queued writes are never lost
 * at exit), not otherwise.
 */
export class SqliteWriterWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (outcome: BatchOutcome) => void>();
  private nextId = 1;
  private stopped = false;

  /** `onFailed` is called once if the thread stops on its own or cannot open the database. */
  constructor(
    dbPath: string,
    private readonly onFailed: (reason: string) => void,
  ) {
    // Plain JavaScript that needs none of the parent's flags (a TypeScript loader would be loaded again in the thread).
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { path: dbPath, module: requireFromHere.resolve("better-sqlite3"), unchangedCode: UNCHANGED_WRITE_CODE },
    });
    this.worker.unref();
    this.worker.on("message", (m: WorkerReply) => this.onMessage(m));
    this.worker.on("error", (err) => this.fail(`the SQLite writer thread failed: ${err.message}`, false));
    this.worker.on("exit", (code) => {
      if (!this.stopped) this.fail(`the SQLite writer thread exited (code ${code})`, false);
    });
  }

  /** Commit one batch (each element is one write's statements). */
  run(items: WriteStep[][]): Promise<BatchOutcome> {
    if (this.stopped) return Promise.resolve({ kind: "not-run" });
    const id = this.nextId++;
    // Each distinct SQL text is sent once per batch. A write whose parameters cannot be computed fails alone
    // (it is sent as an empty write, so the indexes of the others stay).
    const sqls: string[] = [];
    const index = new Map<string, number>();
    const failed = new Map<number, Error>();
    const encoded = items.map((steps, n) => {
      try {
        return steps.map((s) => {
          let i = index.get(s.sql);
          if (i === undefined) {
            i = sqls.push(s.sql) - 1;
            index.set(s.sql, i);
          }
          return s.mustChange ? ([i, stepParams(s), s.mustChange] as const) : ([i, stepParams(s)] as const);
        });
      } catch (err) {
        failed.set(n, err instanceof Error ? err : new Error(String(err)));
        return [];
      }
    });
    return new Promise<BatchOutcome>((resolve) => {
      if (!this.pending.size) this.worker.ref();
      this.pending.set(id, (outcome) => {
        if (outcome.kind === "done") for (const [n, err] of failed) outcome.errors.set(n, err);
        resolve(outcome);
      });
      try {
        this.worker.postMessage({ type: "batch", id, sqls, items: encoded });
      } catch {
        // A parameter that cannot be sent to the thread (not a SQLite value): the batch runs on the calling
        // thread instead, where that write alone fails.
        this.settle(id, { kind: "not-run" });
      }
    });
  }

  private settle(id: number, outcome: BatchOutcome): void {
    const resolve = this.pending.get(id);
    if (!resolve) return;
    this.pending.delete(id);
    if (!this.pending.size) this.worker.unref();
    resolve(outcome);
  }

  private onMessage(m: WorkerReply): void {
    if (m.type === "open-error") {
      this.fail(m.message, true);
      return;
    }
    if (m.type === "failed") {
      this.settle(m.id, { kind: "failed", error: sqliteError(m.message, m.code) });
      return;
    }
    this.settle(m.id, { kind: "done", errors: new Map(m.errors.map(([i, message, code]) => [i, sqliteError(message, code)])) });
  }

  /** Stop using the thread: batches it never opened the database for did not run; others may or may not have. */
  private fail(reason: string, notOpened: boolean): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const id of [...this.pending.keys()]) {
      this.settle(id, notOpened ? { kind: "not-run" } : { kind: "failed", error: new Error(`${reason}; the outcome of this write is unknown`) });
    }
    this.onFailed(reason);
    void this.worker.terminate().catch(() => undefined);
  }

  /** Close the thread's connection and wait for it to exit (after the batches in flight). */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.worker.ref();
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => void this.worker.terminate().then(() => resolve(), () => resolve()), 2000);
      this.worker.once("exit", () => {
        clearTimeout(t);
        resolve();
      });
      this.worker.postMessage({ type: "close" });
    });
  }
}
