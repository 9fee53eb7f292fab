import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WriteBatcher } from "../../src/sqlite";

const dbs: Database.Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

/** A batcher (20 ms window) on a fresh database whose batch transactions are counted. */
function counted(): { db: Database.Database; batcher: WriteBatcher; commits: () => number } {
  const db = new Database(":memory:");
  dbs.push(db);
  db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
  let commits = 0;
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const tx = transaction(fn);
    return ((...args: never[]) => {
      commits++;
      return tx(...args);
    }) as unknown as ReturnType<typeof transaction>;
  }) as typeof db.transaction;
  return { db, batcher: new WriteBatcher(db, { commitWindowMs: 20 }), commits: () => commits };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("WriteBatcher (group commit)", () => {
  it("commits a write on an idle database on the next turn, without waiting for the window", async () => {
    const { db, batcher } = counted();
    const insert = db.prepare("INSERT INTO t (k, v) VALUES (?, ?)");
    const t0 = performance.now();
    await batcher.write(() => insert.run("a", 1));
    expect(performance.now() - t0).toBeLessThan(15); // the window is 20 ms: it was not waited for
    expect(db.prepare("SELECT v FROM t WHERE k = 'a'").get()).toEqual({ v: 1 });
  });

  it("writes queued while a commit is recent wait for the window and share one commit", async () => {
    const { db, batcher, commits } = counted();
    const insert = db.prepare("INSERT INTO t (k, v) VALUES (?, ?)");
    await batcher.write(() => insert.run("first", 0));
    expect(commits()).toBe(1);
    // A burst spread over several event-loop turns, all inside the window after the first commit.
    const pending: Array<Promise<void>> = [];
    for (let i = 0; i < 5; i++) {
      pending.push(batcher.write(() => insert.run(`k${i}`, i)));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(pending);
    expect(commits()).toBe(2);
    expect((db.prepare("SELECT COUNT(*) AS n FROM t WHERE k LIKE 'k%'").get() as { n: number }).n).toBe(5);
  });

  it("a read of a pending row commits it at once; reads of other rows do not split the batch", async () => {
    const { db, batcher, commits } = counted();
    const insert = db.prepare("INSERT INTO t (k, v) VALUES (?, ?)");
    await batcher.write(() => insert.run("warm", 0));
    const w = batcher.write(() => insert.run("x", 7), ["row:x"]);
    batcher.flushIfPending("row:y");
    expect(db.prepare("SELECT v FROM t WHERE k = 'x'").get()).toBeUndefined();
    batcher.flushIfPending("row:x");
    expect(db.prepare("SELECT v FROM t WHERE k = 'x'").get()).toEqual({ v: 7 });
    await w;
    expect(commits()).toBe(2);
    await sleep(30); // the scheduled commit finds nothing left to do
    expect(commits()).toBe(2);
  });

  it("a failing statement rejects only its own write", async () => {
    const { db, batcher } = counted();
    const insert = db.prepare("INSERT INTO t (k, v) VALUES (?, ?)");
    const ok = batcher.write(() => insert.run("a", 1));
    const bad = batcher.write(() => insert.run("b", null));
    await expect(ok).resolves.toBeUndefined();
    await expect(bad).rejects.toThrow(/NOT NULL/);
    expect(db.prepare("SELECT COUNT(*) AS n FROM t WHERE k IN ('a','b')").get()).toEqual({ n: 1 });
  });

  it("rejects a commit window that is not a number ≥ 0", () => {
    const db = new Database(":memory:");
    dbs.push(db);
    expect(() => new WriteBatcher(db, { commitWindowMs: -1 })).toThrow(/commitWindowMs/);
    expect(() => new WriteBatcher(db, { commitWindowMs: Number.NaN })).toThrow(/commitWindowMs/);
  });
});
