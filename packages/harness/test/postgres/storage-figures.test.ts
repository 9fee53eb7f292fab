import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { asCheckpointer, SqliteCheckpointStore } from "../../src/checkpoints";
import type { CheckpointRecord, CheckpointStore } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import type { PersistenceStores } from "../../src/persistence";
import { emptyUsage, openSqliteStores } from "../../src/persistence";
import { openPostgresStorage, PostgresCheckpointStore, PostgresMessageStore, PostgresRunStore, PostgresThreadStore } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";
import { createAgent } from "../../src/runtime";
import { freshPostgresDatabase, ScriptedModel } from "../../src/testing";
import type { FreshDatabase } from "../../src/testing";
import { tool } from "../../src/tools";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
const TURNS = 60;
const dir = mkdtempSync(join(tmpdir(), "df-pg-figures-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run metadata as the gateway passes it to every run (~350 B serialised). */
const RUN_METADATA = {
  ls_integration: "langchain_create_agent",
  agent_name: "default",
  model_name: "gpt-4.1-mini",
  thinking_enabled: false,
  reasoning_effort: null,
  is_plan_mode: false,
  subagent_enabled: true,
  max_concurrent_subagents: 3,
  assistant_id: "lead_agent",
  graph_id: "lead_agent",
  user_id: "default",
  langgraph_version: "1.0.0",
  langgraph_api_url: "http://127.0.0.1:2024",
  run_attempt: 1,
  created_by: "system",
};

const lookup = tool({ name: "lookup", description: "Looks a word up.", schema: z.object({ word: z.string() }), execute: ({ word }) => `definition of ${word}` });

/**
 * A 60-turn thread (human → model → tool → model) as the gateway writes it:
 * checkpoints through the agent loop, the run record created and finished,
 * the turn's messages recorded in the transcript, the thread touched.
 * `size()` is read after turns 30 and 60. Returns the sizes and the wall
 * time per checkpoint of the agent loop.
 */
async function sixtyTurns(store: CheckpointStore, stores: PersistenceStores, threadId: string, size: () => Promise<number>) {
  const model = new ScriptedModel();
  const agent = createAgent({ model, tools: [lookup], checkpointer: store });
  const at = new Map<number, number>([[0, await size()]]);
  await stores.threads.create({ threadId, userId: "default", status: "idle", metadata: {}, displayName: null, createdAt: "2026-12-02T00:00:00.000Z", updatedAt: "2026-12-02T00:00:00.000Z" });
  let loopMs = 0;
  for (let turn = 1; turn <= TURNS; turn++) {
    const runId = `run-${turn}`;
    const now = new Date(Date.UTC(2026, 11, 2, 0, turn)).toISOString();
    await stores.runs.create({ runId, threadId, userId: "default", assistantId: "lead_agent", status: "running", metadata: RUN_METADATA, kwargs: {}, multitaskStrategy: "reject", createdAt: now, updatedAt: now, usage: emptyUsage(), stopReason: null, error: null, modelName: "gpt-4.1-mini" });
    model.push({ text: `Let me look up word ${turn}.`, toolCalls: [{ name: "lookup", args: { word: `w${turn}` } }] }, `Word ${turn} means what the tool said.`);
    const t0 = performance.now();
    const r = await agent.invoke({ messages: [humanMessage(`What does word ${turn} mean?`)] }, { threadId, metadata: RUN_METADATA });
    loopMs += performance.now() - t0;
    expect(r.status).toBe("success");
    const messages = r.state.messages as unknown as Array<Record<string, unknown>>;
    await stores.messages.record(threadId, runId, messages.slice(-4), now);
    await stores.runs.update(runId, { status: "success", updatedAt: now, usage: { ...emptyUsage(), messageCount: 4 } });
    await stores.threads.update(threadId, { updatedAt: now });
    if (turn === 30 || turn === TURNS) at.set(turn, await size());
  }
  const checkpoints = (await store.list(threadId)).length;
  return { at, checkpoints, msPerCheckpointInLoop: loopMs / checkpoints };
}

/** ms per put of `n` chained checkpoints of ~1.4 KB deltas, one after the other (each awaited). */
async function sequentialPuts(store: CheckpointStore, threadId: string, n: number): Promise<number> {
  const body = "x".repeat(1400);
  let parent: string | null = null;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const rec: CheckpointRecord = { threadId, checkpointId: `c${i}`, parentId: parent, createdAt: new Date().toISOString(), metadata: { step: i, source: "loop", __run_base: "c0" }, delta: { messages: [{ op: "add", message: humanMessage(body, { id: `m${i}` }) }] } };
    await store.put(rec);
    parent = rec.checkpointId;
  }
  return (performance.now() - t0) / n;
}

describe.skipIf(!serverUrl)("PostgreSQL storage and put figures beside SQLite", () => {
  let db: FreshDatabase;
  let pgStorage: PostgresStorage;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
    pgStorage = await openPostgresStorage({ url: db.url, schema: "figures", log: () => undefined });
  });
  afterAll(async () => {
    await pgStorage?.close();
    await db?.drop();
  });

  it("a 60-turn thread grows linearly on both; figures printed", async () => {
    // PostgreSQL: every relation of the core tables (heap, indexes, TOAST), as pg_total_relation_size counts them.
    const pgTables = ["deerflow_checkpoints", "deerflow_threads", "deerflow_runs", "deerflow_messages"];
    const pgSize = async (tables = pgTables) => {
      const r = await pgStorage.pool.query<{ n: string }>("SELECT sum(pg_total_relation_size(t::regclass))::bigint AS n FROM unnest($1::text[]) AS t", [tables]);
      return Number(r.rows[0].n);
    };
    // The stores on the real pool, with the statements they send counted.
    const counts = { checkpoints: 0, stores: 0 };
    const counting = (key: keyof typeof counts) => {
      const pool = Object.create(pgStorage.pool) as pg.Pool;
      const query = pgStorage.pool.query.bind(pgStorage.pool) as (q: unknown) => Promise<pg.QueryResult>;
      (pool as unknown as { query: typeof query }).query = (q) => (counts[key]++, query(q));
      return pool;
    };
    const storesPool = counting("stores");
    const pgCheckpoints = new PostgresCheckpointStore(counting("checkpoints"));
    const pgStores: PersistenceStores = { threads: new PostgresThreadStore(storesPool), runs: new PostgresRunStore(storesPool), messages: new PostgresMessageStore(storesPool), close: async () => undefined };
    const pgRun = await sixtyTurns(pgCheckpoints, pgStores, "t60", () => pgSize());
    const statementsPerTurn = { checkpoints: counts.checkpoints / TURNS, stores: counts.stores / TURNS };
    const pgCheckpointsOnly = await pgSize(["deerflow_checkpoints"]);

    // SQLite: checkpoints and the gateway tables in one file, as `database.backend: sqlite` with a shared file; pages in use.
    const sqliteStore = new SqliteCheckpointStore(join(dir, "deerflow.db"));
    const sqliteStores = openSqliteStores(sqliteStore.db);
    const sqliteSize = async () => {
      await sqliteStore.headId("t60"); // settle pending writes
      const pages = Number(sqliteStore.db.pragma("page_count", { simple: true })) - Number(sqliteStore.db.pragma("freelist_count", { simple: true }));
      return pages * Number(sqliteStore.db.pragma("page_size", { simple: true }));
    };
    const sqliteRun = await sixtyTurns(sqliteStore, sqliteStores, "t60", sqliteSize);

    const grown = (at: Map<number, number>) => ({ first: at.get(30)! - at.get(0)!, second: at.get(TURNS)! - at.get(30)!, total: at.get(TURNS)! - at.get(0)! });
    const pg = grown(pgRun.at);
    const lite = grown(sqliteRun.at);
    const pgPayload = await pgStorage.checkpointStore.storedBytes("t60");
    const litePayload = await sqliteStore.storedBytes("t60");

    const seqPg = await sequentialPuts(pgStorage.checkpointStore, "puts", 400);
    const seqLite = await sequentialPuts(sqliteStore, "puts", 400);
    // Concurrent runs: 16 threads putting at once on the pool.
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 16 }, (_, i) => sequentialPuts(pgStorage.checkpointStore, `conc-${i}`, 50)));
    const concPgPerPut = (performance.now() - t0) / (16 * 50);

    console.log(
      [
        `[figures] 60-turn thread (${pgRun.checkpoints} checkpoints, ${TURNS} runs, ${TURNS * 4} transcript rows):`,
        `  PostgreSQL pg_total_relation_size, core tables: ${(pg.total / 1024).toFixed(1)} KB (turns 1-30 ${(pg.first / 1024).toFixed(1)} KB, 31-60 ${(pg.second / 1024).toFixed(1)} KB); checkpoints table alone ${(pgCheckpointsOnly / 1024).toFixed(1)} KB`,
        `  SQLite pages in use, same tables: ${(lite.total / 1024).toFixed(1)} KB (turns 1-30 ${(lite.first / 1024).toFixed(1)} KB, 31-60 ${(lite.second / 1024).toFixed(1)} KB)`,
        `  checkpoint payload (metadata + delta text): PostgreSQL ${(pgPayload / 1024).toFixed(1)} KB, SQLite ${(litePayload / 1024).toFixed(1)} KB`,
        `  checkpoint put, sequential (awaited each): PostgreSQL ${seqPg.toFixed(3)} ms, SQLite ${seqLite.toFixed(3)} ms`,
        `  checkpoint put, 16 threads at once on the pool: PostgreSQL ${concPgPerPut.toFixed(3)} ms wall per put`,
        `  agent loop wall time per checkpoint: PostgreSQL ${pgRun.msPerCheckpointInLoop.toFixed(3)} ms, SQLite ${sqliteRun.msPerCheckpointInLoop.toFixed(3)} ms`,
        `  PostgreSQL statements per turn: checkpoint store ${statementsPerTurn.checkpoints.toFixed(2)} (4 checkpoints and the reads of a run start), thread/run/transcript stores ${statementsPerTurn.stores.toFixed(2)}`,
      ].join("\n"),
    );

    // Same records on both backends.
    expect(pgPayload).toBe(litePayload);
    expect(pgRun.checkpoints).toBe(TURNS * 4);
    // Linear: the second 30 turns take about what the first 30 took (page granularity allows some slack).
    expect(pg.second).toBeLessThan(pg.first * 1.35);
    expect(lite.second).toBeLessThan(lite.first * 1.35);
    // The run metadata is stored once per run on PostgreSQL too: every raw row but the run's first names its base.
    const raw = await pgStorage.checkpointStore.list("t60");
    // Four checkpoints a turn take at most four INSERTs; the run start reads the head once or twice.
    expect(statementsPerTurn.checkpoints).toBeLessThanOrEqual(7);
    // run create + finish, one transcript statement, one thread touch (and the thread's creation once)
    expect(counts.stores).toBe(TURNS * 4 + 1);
    expect(raw.filter((r) => !("__run_base" in r.metadata))).toHaveLength(TURNS);
    expect((await asCheckpointer(pgStorage.checkpointStore).list("t60", { limit: 1 }))[0].metadata).toMatchObject(RUN_METADATA);
    // Per-row overhead (tuple headers, two indexes, 8 KB pages) stays within a small factor of SQLite's.
    expect(pg.total).toBeLessThan(lite.total * 4);
    await sqliteStores.close();
    await sqliteStore.close();
  });
});
