import Database from "better-sqlite3";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { UNCHANGED_WRITE_CODE, WriteBatcher } from "../../src/sqlite";
import type { WriteStep } from "../../src/sqlite";
import { SqliteWriterWorker } from "../../src/sqlite/writer";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "df-batcher-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const open: Array<{ db: Database.Database; batcher: WriteBatcher }> = [];
afterEach(async () => {
  for (const { db, batcher } of open.splice(0)) {
    await batcher.close();
    db.close();
  }
});

let n = 0;
/** A batcher (20 ms window) on a fresh database file, with its batches counted. */
function setup(options: { worker: boolean; windowMs?: number }): { db: Database.Database; batcher: WriteBatcher; batches: () => number } {
  const db = new Database(path.join(dir, `b${n++}.db`));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
  const batcher = new WriteBatcher(db, { commitWindowMs: options.windowMs ?? 20, worker: options.worker });
  open.push({ db, batcher });
  let batches = 0;
  const flush = batcher.flush.bind(batcher);
  batcher.flush = () => {
    if ((batcher as unknown as { queue: unknown[] }).queue.length) batches++;
    flush();
  };
  return { db, batcher, batches: () => batches };
}

const ins = (k: string, v: unknown): WriteStep => ({ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: [k, v] });
const value = (db: Database.Database, k: string) => (db.prepare("SELECT v FROM t WHERE k = ?").get(k) as { v: number } | undefined)?.v;

describe.each([
  ["on the writer thread", true],
  ["on the calling thread", false],
])("WriteBatcher %s", (_label, worker) => {
  it("runs where it says", () => {
    expect(setup({ worker }).batcher.offThread).toBe(worker);
  });

  it("commits a write on an idle database on the next turn, without waiting for the window", async () => {
    // A long window, so "not waited for" is a race the write wins by a wide margin even on a loaded machine.
    const { db, batcher } = setup({ worker, windowMs: 500 });
    await batcher.write(ins("warm-up", 0)); // starts the writer thread, if any
    await new Promise((r) => setTimeout(r, 510)); // idle again: the window has passed (a delay can only make it longer)
    const windowElapsed = new Promise<string>((r) => setTimeout(() => r("window"), 500));
    // the write commits before a timer of the window's length fires: it did not wait for the window
    expect(await Promise.race([batcher.write(ins("a", 1)).then(() => "write"), windowElapsed])).toBe("write");
    expect(value(db, "a")).toBe(1); // committed: the main connection sees it
  });

  it("writes queued while a commit is recent wait for the window and share one commit", async () => {
    // A window long enough that the burst below is queued within it even on a loaded machine.
    const { db, batcher, batches } = setup({ worker, windowMs: 300 });
    await batcher.write(ins("warm-up", 0)); // starts the writer thread, if any
    await new Promise((r) => setTimeout(r, 310)); // idle again: the window has passed
    await batcher.write(ins("first", 0));
    expect(batches()).toBe(2);
    // A burst spread over several event-loop turns, all inside the window after the first commit: many writers
    // at once in its first turn (more than one run's step), then one write per turn.
    // On the writer thread, another connection's open transaction keeps the first batch on its way until the
    // burst is queued (the writer thread waits for the lock), however fast that thread is.
    const other = worker ? new Database(db.name) : undefined;
    other?.exec("BEGIN IMMEDIATE");
    const pending: Array<Promise<void>> = [];
    for (let i = 0; i < 5; i++) {
      const writes = i === 0 ? 12 : 1;
      for (let j = 0; j < writes; j++) pending.push(batcher.write(ins(`k${i}-${j}`, i)));
      await new Promise((r) => setImmediate(r));
    }
    other?.exec("COMMIT");
    other?.close();
    await Promise.all(pending);
    // On the writer thread the burst's first turn finds the writer idle and goes at once; the others, queued
    // while it is on its way, share the next commit. On the calling thread all of them wait for the window.
    expect(batches()).toBe(worker ? 4 : 3);
    expect((db.prepare("SELECT COUNT(*) AS n FROM t WHERE k LIKE 'k%'").get() as { n: number }).n).toBe(16);
  });

  it("a writer awaiting each commit in turn waits for the window once, not once per write", async () => {
    const db = new Database(path.join(dir, `b${n++}.db`));
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
    // A long window: waiting for it on each of the ten writes would take more than 4.5 s.
    const batcher = new WriteBatcher(db, { commitWindowMs: 500, worker });
    open.push({ db, batcher });
    await batcher.write(ins("warm-up", 0));
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) await batcher.write(ins(`s${i}`, i));
    // The second write waits one window (it gathers nothing else); the others commit on the next turn.
    expect(performance.now() - t0).toBeLessThan(3000);
    expect((db.prepare("SELECT COUNT(*) AS n FROM t WHERE k LIKE 's%'").get() as { n: number }).n).toBe(10);
  });

  it("a write never blocks the event loop on a write lock another connection holds", async () => {
    const { db, batcher } = setup({ worker });
    await batcher.write(ins("warm-up", 0));
    const other = new Database(db.name);
    try {
      other.exec("BEGIN IMMEDIATE"); // another process's open write transaction
      let done = false;
      const w = batcher.write(ins("locked", 1)).then(() => (done = true));
      const t0 = performance.now();
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r)); // the batch's turn has come and gone
      if (worker) {
        // On the writer thread the batch waits for the lock there; this thread went on at once.
        expect(performance.now() - t0).toBeLessThan(1000);
        expect(done).toBe(false);
        other.exec("COMMIT");
        await w;
        expect(value(db, "locked")).toBe(1);
      } else {
        other.exec("COMMIT");
        await w.catch(() => undefined);
      }
    } finally {
      if (other.inTransaction) other.exec("COMMIT");
      other.close();
    }
  });

  it("small batches of a lone writer commit on this thread; after a burst of writers they go to the writer thread for a while", async () => {
    const { db, batcher } = setup({ worker });
    const internals = batcher as unknown as { worker?: { run: (...a: unknown[]) => unknown } };
    for (let i = 0; i < 3; i++) await batcher.write([ins(`lone${i}`, i)]);
    expect(internals.worker).toBeUndefined(); // never needed the writer thread
    if (!worker) return;
    await Promise.all(Array.from({ length: 12 }, (_, i) => batcher.write(ins(`burst${i}`, i))));
    const run = internals.worker!.run.bind(internals.worker);
    let handedOver = 0;
    internals.worker!.run = (...a: unknown[]) => (handedOver++, run(...a));
    await batcher.write(ins("after", 1));
    expect(handedOver).toBe(1);
    expect(value(db, "after")).toBe(1);
  });

  it("one writer after another stays on this thread; small batches of different writers back to back go to the writer thread", async () => {
    // A long window: "back to back" (within two windows) holds however slowly a loaded machine runs this.
    const { db, batcher } = setup({ worker, windowMs: 1000 });
    const internals = batcher as unknown as { worker?: { run: (...a: unknown[]) => unknown } };
    // Runs one after another, each committing twice on its own rows (a turn's step before its tool, then its end).
    for (let run = 0; run < 6; run++) {
      await batcher.write(ins(`run${run}-step`, run), [`checkpoints:t${run}`, "threads-any"]);
      await batcher.write(ins(`run${run}-end`, run), [`checkpoints:t${run}`, `run:r${run}`, "threads-any"]);
    }
    expect(internals.worker).toBeUndefined();
    if (!worker) return;
    // A burst being admitted: each request's small batch commits on its own, and none shares a row with the last.
    for (let w = 0; w < 3; w++) await batcher.write(ins(`burst${w}`, w), [`thread:b${w}`, "threads-any"]);
    expect(internals.worker).toBeDefined();
    const run = internals.worker!.run.bind(internals.worker);
    let handedOver = 0;
    internals.worker!.run = (...a: unknown[]) => (handedOver++, run(...a));
    await batcher.write(ins("after", 1), ["thread:b0"]);
    expect(handedOver).toBe(1); // the burst is still on: the writer thread commits it
    expect(value(db, "after")).toBe(1);
  });

  it("settle(key) commits a pending row's write and waits for it; other keys do not split the batch", async () => {
    const { db, batcher, batches } = setup({ worker });
    await batcher.write(ins("warm", 0));
    const w = batcher.write(ins("x", 7), ["row:x"]);
    await batcher.settle("row:y");
    expect(value(db, "x")).toBeUndefined();
    await batcher.settle("row:x");
    expect(value(db, "x")).toBe(7);
    await w;
    expect(batches()).toBe(2);
  });

  it("a failing statement rejects only its own write; a write of several statements fails as a whole", async () => {
    const { db, batcher } = setup({ worker });
    const ok = batcher.write(ins("a", 1));
    const bad = batcher.write(ins("b", null));
    const group = batcher.write([ins("c", 1), ins("d", null)]);
    await expect(ok).resolves.toBeUndefined();
    await expect(bad).rejects.toThrow(/NOT NULL/);
    await expect(group).rejects.toMatchObject({ name: "SqliteError", code: "SQLITE_CONSTRAINT_NOTNULL" });
    expect(value(db, "a")).toBe(1);
    expect(value(db, "b")).toBeUndefined();
    expect(value(db, "c")).toBeUndefined(); // rolled back with its group
  });

  it("a mustChange statement that changes no row fails its write (and undoes the write's other statements) with its message", async () => {
    const { db, batcher } = setup({ worker });
    await batcher.write(ins("base", 1));
    const bump = (k: string): WriteStep => ({ sql: "UPDATE t SET v = v + 1 WHERE k = ?", params: [k], mustChange: `no row ${k}` });
    const results = await Promise.allSettled([
      batcher.write([ins("with-missing", 1), bump("missing")]),
      batcher.write(bump("base")),
      batcher.write({ sql: "UPDATE t SET v = 0 WHERE k = ?", params: ["missing"] }), // no mustChange: changing nothing is fine
      batcher.write({ sql: "INSERT INTO t (k, v) SELECT @k, @v WHERE @v > 0", params: [{ k: "named", v: 0 }], mustChange: "v must be > 0" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled", "fulfilled", "rejected"]);
    const err = (results[0] as PromiseRejectedResult).reason as Error & { code?: string };
    expect(err.message).toBe("no row missing");
    expect(err.code).toBe(UNCHANGED_WRITE_CODE);
    expect(((results[3] as PromiseRejectedResult).reason as Error).message).toBe("v must be > 0");
    expect(value(db, "with-missing")).toBeUndefined(); // undone with its write
    expect(value(db, "base")).toBe(2);
    expect(value(db, "named")).toBeUndefined();
  });

  it("deferred parameters are computed when the batch commits; one that throws fails only its write", async () => {
    const { db, batcher } = setup({ worker });
    const row = { v: 1 };
    const later = batcher.write({ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: () => ["late", row.v] });
    row.v = 2; // still the queue's: the value at commit time is stored
    const broken = batcher.write({
      sql: "INSERT INTO t (k, v) VALUES (?, ?)",
      params: () => {
        throw new Error("cannot serialise this row");
      },
    });
    const fine = batcher.write(ins("fine", 3));
    await expect(later).resolves.toBeUndefined();
    await expect(broken).rejects.toThrow("cannot serialise this row");
    await expect(fine).resolves.toBeUndefined();
    expect(value(db, "late")).toBe(2);
    expect(value(db, "fine")).toBe(3);
  });

  it("a parameter SQLite cannot store fails only its own write", async () => {
    const { db, batcher } = setup({ worker });
    const bad = batcher.write({ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: ["f", () => 1] });
    const good = batcher.write(ins("g", 5));
    await expect(bad).rejects.toThrow();
    await expect(good).resolves.toBeUndefined();
    expect(value(db, "g")).toBe(5);
    expect(value(db, "f")).toBeUndefined();
  });

  it("batches commit in the order they were queued", async () => {
    const { db, batcher } = setup({ worker });
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < 50; i++) {
      writes.push(batcher.write({ sql: "INSERT INTO t (k, v) VALUES ('ctr', ?) ON CONFLICT (k) DO UPDATE SET v = ?", params: [i, i] }));
      if (i % 7 === 0) batcher.flush(); // several batches in flight at once
    }
    await Promise.all(writes);
    expect(value(db, "ctr")).toBe(49);
  });

  it("drain() waits for every write; close() stops the writer and a later write starts a new one", async () => {
    const { db, batcher } = setup({ worker });
    void batcher.write(ins("p", 1));
    await batcher.drain();
    expect(value(db, "p")).toBe(1);
    await batcher.close();
    await batcher.write(ins("q", 2));
    expect(value(db, "q")).toBe(2);
  });
});

describe("WriteBatcher without a usable writer thread", () => {
  it("never uses a worker for :memory: (a second connection could not see it)", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
    const batcher = new WriteBatcher(db, { worker: true });
    open.push({ db, batcher });
    expect(batcher.offThread).toBe(false);
    await batcher.write(ins("m", 3));
    expect(value(db, "m")).toBe(3);
  });

  it("a writer thread that cannot open its file reports its batches as not run (the batcher then runs them itself)", async () => {
    let failure = "";
    const writer = new SqliteWriterWorker(path.join(dir, "no-such-dir", "x.db"), (reason) => (failure = reason));
    const outcome = await writer.run([[ins("r", 4)]]);
    expect(outcome).toEqual({ kind: "not-run" });
    expect(failure).toMatch(/unable to open|directory does not exist|no such file/i);
    // after the failure it refuses new batches the same way, at once
    expect(await writer.run([[ins("s", 5)]])).toEqual({ kind: "not-run" });
    await writer.close();
  });

  it("rejects a commit window that is not a number ≥ 0", () => {
    const db = new Database(":memory:");
    expect(() => new WriteBatcher(db, { commitWindowMs: -1 })).toThrow(/commitWindowMs/);
    expect(() => new WriteBatcher(db, { commitWindowMs: Number.NaN })).toThrow(/commitWindowMs/);
    db.close();
  });
});
