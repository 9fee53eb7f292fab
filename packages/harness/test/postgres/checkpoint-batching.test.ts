import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import type { CheckpointRecord } from "../../src/checkpoints";
import { openPostgresStorage, PostgresCheckpointStore } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

const rec = (threadId: string, id: string, parentId: string | null): CheckpointRecord => ({
  threadId,
  checkpointId: id,
  parentId,
  createdAt: "2026-12-02T00:00:00.000Z",
  metadata: { step: 0, source: "loop" },
  delta: { values: { n: id } },
});

describe.skipIf(!serverUrl)("PostgreSQL checkpoint writes: round trips", () => {
  let db: FreshDatabase;
  let storage: PostgresStorage;
  let statements: string[];
  let store: PostgresCheckpointStore;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
    storage = await openPostgresStorage({ url: db.url, schema: "batching", log: () => undefined });
    // The real pool, with every statement it is handed counted.
    const pool = storage.pool;
    const query = pool.query.bind(pool) as (q: pg.QueryConfig) => Promise<pg.QueryResult>;
    const counting = Object.create(pool) as pg.Pool;
    (counting as unknown as { query: typeof query }).query = (q: pg.QueryConfig) => {
      statements.push(q.text);
      return query(q);
    };
    store = new PostgresCheckpointStore(counting);
  });
  afterAll(async () => {
    await storage?.close();
    await db?.drop();
  });

  it("one statement per awaited put; steps queued meanwhile go out together (at most 64 a statement)", async () => {
    statements = [];
    await store.put(rec("a", "a0", null));
    await store.put(rec("a", "a1", "a0"));
    expect(statements).toHaveLength(2);

    statements = [];
    const ids = Array.from({ length: 150 }, (_, i) => `b${i}`);
    await Promise.all(ids.map((id, i) => store.put(rec("b", id, i ? ids[i - 1] : null))));
    // the first at once, then 149 queued behind it: 64 + 64 + 21
    expect(statements).toHaveLength(4);
    expect((await store.list("b")).map((r) => r.checkpointId)).toEqual([...ids].reverse());

    // Another thread's writes do not wait for this one's.
    statements = [];
    await Promise.all([store.put(rec("c", "c0", null)), store.put(rec("d", "d0", null))]);
    expect(statements).toHaveLength(2);
  });

  it("prints ms per checkpoint: awaited one by one, and queued as a run queues them", async () => {
    const n = 400;
    let t0 = performance.now();
    let parent: string | null = null;
    for (let i = 0; i < n; i++) {
      await store.put(rec("seq", `s${i}`, parent));
      parent = `s${i}`;
    }
    const awaited = (performance.now() - t0) / n;
    t0 = performance.now();
    const queued: Promise<void>[] = [];
    parent = null;
    for (let i = 0; i < n; i++) {
      queued.push(store.put(rec("queued", `q${i}`, parent)));
      parent = `q${i}`;
    }
    await Promise.all(queued);
    const batched = (performance.now() - t0) / n;
    t0 = performance.now();
    for (let i = 0; i < 100; i++) await storage.pool.query("SELECT 1");
    const rtt = (performance.now() - t0) / 100;
    console.log(`[figures] PostgreSQL checkpoint put: ${awaited.toFixed(3)} ms awaited one by one, ${batched.toFixed(3)} ms queued (batched); one SELECT 1 round trip ${rtt.toFixed(3)} ms`);
    expect(await store.headId("queued")).toBe(`q${n - 1}`);
    expect(batched).toBeLessThan(awaited);
  });
});
