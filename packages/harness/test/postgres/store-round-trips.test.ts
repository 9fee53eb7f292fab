import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { emptyUsage } from "../../src/persistence";
import { openPostgresStorage, PostgresRunStore, PostgresThreadStore } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";
import { runRecord, threadRecord } from "../persistence/store-contract";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

/**
 * Reading its own writes must not cost the hot path a round trip per write:
 * a read with nothing pending sends only itself, and the patches of one row
 * handed in together (the run recorder's end of a run) go out as one UPDATE.
 */
describe.skipIf(!serverUrl)("PostgreSQL thread and run stores: round trips", () => {
  let db: FreshDatabase;
  let storage: PostgresStorage;
  let statements: string[] = [];
  let runs: PostgresRunStore;
  let threads: PostgresThreadStore;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
    storage = await openPostgresStorage({ url: db.url, schema: "round_trips", log: () => undefined });
    // The real pool, with every statement it is handed counted.
    const pool = storage.pool;
    const query = pool.query.bind(pool) as (q: pg.QueryConfig) => Promise<pg.QueryResult>;
    const counting = Object.create(pool) as pg.Pool;
    (counting as unknown as { query: typeof query }).query = (q: pg.QueryConfig) => {
      statements.push(q.text.split(/\s+/).slice(0, 3).join(" "));
      return query(q);
    };
    runs = new PostgresRunStore(counting);
    threads = new PostgresThreadStore(counting);
  });
  afterAll(async () => {
    await storage?.close();
    await db?.drop();
  });

  it("a read with nothing pending is one statement; a row's patches handed in together are one UPDATE", async () => {
    await threads.create(threadRecord("rt"));
    await runs.create(runRecord("rt-1", "rt"));
    statements = [];
    expect((await runs.get("rt-1"))?.status).toBe("pending");
    expect(statements).toEqual(["SELECT run_id, thread_id,"]);

    // the end of a run: status, usage and the thread's title and status, handed in at once, then read at once
    statements = [];
    const writes = [
      runs.update("rt-1", { status: "running" }),
      runs.update("rt-1", { status: "success", usage: { ...emptyUsage(), totalTokens: 5 }, stopReason: "done" }),
      threads.update("rt", { displayName: "Title" }),
      threads.update("rt", { status: "idle", updatedAt: "2024-02-02T00:00:00.000Z" }),
    ];
    const [run, thread] = await Promise.all([runs.get("rt-1"), threads.get("rt")]);
    await Promise.all(writes);
    expect(run).toMatchObject({ status: "success", stopReason: "done", usage: { totalTokens: 5 } });
    expect(thread).toMatchObject({ status: "idle", displayName: "Title", updatedAt: "2024-02-02T00:00:00.000Z" });
    expect(statements.sort()).toEqual(["SELECT run_id, thread_id,", "SELECT thread_id, user_id,", "UPDATE deerflow_runs SET", "UPDATE deerflow_threads SET"]);

    // patches queued behind one in flight go out together: 1 + 1 statements for 30 patches
    statements = [];
    const first = runs.update("rt-1", { error: "e0" });
    await Promise.resolve();
    const more = Array.from({ length: 29 }, (_, i) => runs.update("rt-1", { error: `e${i + 1}` }));
    await Promise.all([first, ...more]);
    expect(statements).toEqual(["UPDATE deerflow_runs SET", "UPDATE deerflow_runs SET"]);
    expect((await runs.get("rt-1"))?.error).toBe("e29");
  });

  it("another row's writes do not wait for this one's", async () => {
    await runs.create(runRecord("rt-a", "rt"));
    await runs.create(runRecord("rt-b", "rt"));
    statements = [];
    const a = runs.update("rt-a", { status: "running" });
    await runs.update("rt-b", { status: "error" });
    // both went out before b's answer came back (one statement in flight per row, not per store)
    expect(statements).toEqual(["UPDATE deerflow_runs SET", "UPDATE deerflow_runs SET"]);
    await a;
    expect([(await runs.get("rt-a"))?.status, (await runs.get("rt-b"))?.status]).toEqual(["running", "error"]);
  });
});
