import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appConfigFromText } from "../../src/config";
import type { AppConfig } from "../../src/config";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { ConfigError } from "../../src/errors";
import { persistenceDbPath, SqliteRunLocks } from "../../src/persistence";
import { createAgent } from "../../src/runtime";
import { openRunBackends, ownershipSettings, STREAM_BRIDGE_REDIS_URL_ENV } from "../../src/runs";
import type { RunRequest, StreamItem } from "../../src/runs";
import { threadStateSchema } from "../../src/state";
import { openStorage } from "../../src/storage";
import { freshPostgresDatabase, ScriptedModel, startRedis } from "../../src/testing";
import type { FreshDatabase } from "../../src/testing";
import { tool } from "../../src/tools";
import { runRequest } from "./run-request";

const dirs: string[] = [];
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(path.join(tmpdir(), "df-backends-"));
  dirs.push(d);
  return d;
}

const config = (...lines: string[]): AppConfig => appConfigFromText(["sandbox:", "  use: local", ...lines, ""].join("\n")).config;

async function backendsFor(cfg: AppConfig, env: NodeJS.ProcessEnv = {}) {
  const dataDir = tmp();
  const storage = await openStorage(cfg, { dataDir, needCheckpoints: false, needStores: true });
  const logs: string[] = [];
  const backends = await openRunBackends({ config: cfg, storage, stores: storage.stores!, dataDir, log: (m) => void logs.push(m), env });
  closers.push(() => storage.close(), () => backends.close());
  return { backends, logs, dataDir };
}

describe("openRunBackends", () => {
  it("memory storage: in-memory lock, leases, bridge and signals, not shared; run_ownership in milliseconds", async () => {
    const { backends } = await backendsFor(config("database:", "  backend: memory", "run_ownership:", "  lease_seconds: 12", "  grace_seconds: 3", "  heartbeat_enabled: true"));
    expect(backends.shared).toBe(false);
    expect(backends.bridge.kind).toBe("memory");
    expect(backends.ownership).toEqual({ leaseMs: 12_000, graceMs: 3000, heartbeat: true });
    expect(await backends.lock.acquire("t", "r", backends.ownerId, 10, 0)).toBe(true);
    expect(await backends.lock.acquire("t", "other", backends.ownerId, 10, 0)).toBe(false);
  });

  it("SQLite storage: lock and leases are tables in gateway.db, seen by another connection on the file", async () => {
    const { backends, dataDir } = await backendsFor(config());
    expect(backends.shared).toBe(false);
    expect(await backends.leases.acquire("r1", "t1", backends.ownerId, 5000, 0)).toBe(true);
    const other = new SqliteRunLocks(persistenceDbPath(dataDir));
    closers.push(async () => other.close());
    expect(await other.leases.get("r1")).toMatchObject({ owner: backends.ownerId, expiresAt: 5000 });
    expect(await other.leases.acquire("r1", "t1", "someone-else", 9000, 1000)).toBe(false);
    expect(await other.leases.acquire("r1", "t1", "someone-else", 9000, 6000)).toBe(true);
  });

  it("the defaults are DeerFlow's: 30 s lease, 10 s grace, no heartbeat", () => {
    expect(ownershipSettings(undefined)).toEqual({ leaseMs: 30_000, graceMs: 10_000, heartbeat: false });
  });

  it("type redis without a URL is a ConfigError naming the keys", async () => {
    await expect(backendsFor(config("database:", "  backend: memory", "stream_bridge:", "  type: redis"))).rejects.toThrow(ConfigError);
    await expect(backendsFor(config("database:", "  backend: memory", "stream_bridge:", "  type: redis"))).rejects.toThrow(/stream_bridge\.redis_url or DEER_FLOW_STREAM_BRIDGE_REDIS_URL/);
  });

  const redisUrl = process.env.DEERFLOW_TEST_REDIS_URL;
  it.skipIf(!redisUrl)("DEER_FLOW_STREAM_BRIDGE_REDIS_URL implies the Redis bridge; without shared locks it says runs are not shared", async () => {
    const { backends, logs } = await backendsFor(config("database:", "  backend: memory"), { [STREAM_BRIDGE_REDIS_URL_ENV]: redisUrl });
    expect(backends.bridge.kind).toBe("redis");
    expect(backends.shared).toBe(false);
    expect(logs.join("\n")).toMatch(/runs are not shared between processes/);
  });
});

/**
 * A tool that holds the run until it is cancelled; `open()` lets the first
 * call return (later calls wait for the cancel).
 */
function gateTool() {
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  let opened!: () => void;
  const firstOpens = new Promise<void>((r) => (opened = r));
  let calls = 0;
  const t = tool({
    name: "gate",
    description: "Wait",
    schema: z.object({}),
    execute: (_a, rt) =>
      new Promise<string>((resolve, reject) => {
        if (calls++ === 0) void firstOpens.then(() => resolve("opened"));
        entered();
        rt.signal.addEventListener("abort", () => reject(rt.signal.reason ?? new Error("aborted")), { once: true });
      }),
  });
  return { tool: t, inside, open: opened };
}

function request(threadId: string, text: string, extra: Partial<RunRequest> = {}): RunRequest {
  return runRequest(threadId, text, { streamModes: ["values"], ...extra });
}

describe("run_ownership.heartbeat_enabled on one process's SQLite data dir", () => {
  it("the executing process holds the run's lease in gateway.db while it runs and drops it at the end", async () => {
    const gate = gateTool();
    const model = new ScriptedModel([{ text: "waiting", toolCalls: [{ name: "gate", args: {} }] }]);
    const dataDir = tmp();
    const runtime = await DeerFlowRuntime.open({
      config: config("run_ownership:", "  heartbeat_enabled: true"),
      dataDir,
      log: () => undefined,
      agentFactory: ({ checkpointer }) => createAgent({ model, tools: [gate.tool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    closers.push(() => runtime.close());
    const run = await runtime.runs.create(request("hb-thread", "one"));
    await gate.inside;
    const other = new SqliteRunLocks(persistenceDbPath(dataDir));
    closers.push(async () => other.close());
    const lease = await other.leases.get(run.runId);
    expect(lease).toMatchObject({ owner: runtime.runBackends.ownerId, threadId: "hb-thread" });
    expect(lease!.expiresAt).toBeGreaterThan(Date.now());
    await runtime.runs.cancel(run.runId, "interrupt", true);
    expect(await other.leases.get(run.runId)).toBeUndefined();
  });
});

// Stops a Redis of its own, never the shared one.
describe.skipIf(!process.env.DEERFLOW_TEST_REDIS_URL)("a Redis outage during a run", () => {
  it("fails the affected run cleanly (error status, its lease dropped); the runtime keeps serving and refuses new runs with a clear error", async () => {
    const server = await startRedis();
    closers.push(() => server.stop());
    process.env.DEERFLOW_TEST_OUTAGE_REDIS_URL = server.url;
    const gate = gateTool();
    const callGate = { text: "waiting", toolCalls: [{ name: "gate", args: {} }] };
    const model = new ScriptedModel([callGate, { ...callGate, text: "still waiting" }]);
    const logs: string[] = [];
    const runtime = await DeerFlowRuntime.open({
      config: config(
        "database:",
        "  backend: memory",
        "stream_bridge:",
        "  type: redis",
        "  redis_url: $DEERFLOW_TEST_OUTAGE_REDIS_URL",
        "run_ownership:",
        "  lease_seconds: 0.3",
        "  heartbeat_enabled: true",
      ),
      dataDir: tmp(),
      log: (m) => void logs.push(m),
      agentFactory: ({ checkpointer }) => createAgent({ model, tools: [gate.tool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    closers.push(() => runtime.close());
    const run = await runtime.runs.create(request("outage-thread", "one"));
    await gate.inside;
    await server.stop();
    // The run goes on and publishes its next step: storing it fails, and the next heartbeat stops the run.
    gate.open();
    const end = await run.done;
    expect(end.status).toBe("error");
    expect(end.error).toMatch(/Redis/);
    await run.recorded;
    expect(await runtime.stores.runs.get(run.runId)).toMatchObject({ status: "error" });
    expect(await runtime.runBackends.leases.get(run.runId)).toBeUndefined();
    expect(logs.join("\n")).toMatch(/event stream of run .* failed; stopping the run/);
    // The process still answers; a new run fails at once with the stream's error instead of running unseen.
    expect((await runtime.readState("outage-thread"))?.values.messages.length).toBeGreaterThan(0);
    const next = await runtime.runs.create(request("outage-thread-2", "two"));
    expect((await next.done).status).toBe("error");
  });
});

const pgUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
const redisUrl = process.env.DEERFLOW_TEST_REDIS_URL;
describe.skipIf(!pgUrl || !redisUrl)("two runtimes on PostgreSQL + Redis share runs", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(pgUrl!);
  });
  afterAll(async () => {
    await db?.drop();
  });

  /**
   * Two runtimes ("processes") on one PostgreSQL schema and one Redis, over one scripted model whose first
   * answer calls the gate tool (the run then waits inside it) and whose second answer is `secondAnswer`.
   */
  async function twoSharedRuntimes(schema: string, secondAnswer: string) {
    process.env.DEERFLOW_TEST_RUNS_PG_URL = db.url;
    process.env.DEERFLOW_TEST_RUNS_REDIS_URL = redisUrl;
    const cfg = config("database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_RUNS_PG_URL", `  postgres_schema: ${schema}`, "stream_bridge:", "  type: redis", "  redis_url: $DEERFLOW_TEST_RUNS_REDIS_URL");
    const gate = gateTool();
    const model = new ScriptedModel([{ text: "waiting", toolCalls: [{ name: "gate", args: {} }] }, secondAnswer]);
    const open = () =>
      DeerFlowRuntime.open({
        config: cfg,
        dataDir: tmp(),
        log: () => undefined,
        agentFactory: ({ checkpointer }) => createAgent({ model, tools: [gate.tool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
      });
    const a = await open();
    const b = await open();
    closers.push(() => a.close(), () => b.close());
    return { a, b, gate };
  }

  it("A executes; B joins the stream, cancels it (A aborts it) and waits for the stored end; then B runs on the thread", async () => {
    const { a, b, gate } = await twoSharedRuntimes("runs_shared", "B's answer");
    expect(a.runs.shared && b.runs.shared).toBe(true);
    const threadId = `shared-${Date.now()}`;
    await a.stores.threads.create({ threadId, userId: "u1", status: "idle", metadata: {}, displayName: null, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() });

    const run = await a.runs.create(request(threadId, "one"));
    await gate.inside;
    expect((await b.runBackends.leases.get(run.runId))?.owner).toBe(a.runBackends.ownerId);
    await expect(b.runs.create(request(threadId, "two"))).rejects.toMatchObject({ code: "run_conflict" });
    const joined = new Promise<StreamItem[]>((resolve) => {
      const items: StreamItem[] = [];
      b.runs.subscribe(run.runId, null, (item) => {
        items.push(item);
        if (item.kind !== "event") resolve(items);
      });
    });
    const t0 = performance.now();
    await b.runs.cancel(run.runId, "interrupt", true);
    const cancelMs = performance.now() - t0;
    expect(cancelMs).toBeLessThan(500);
    const items = await joined;
    expect(items[0]).toMatchObject({ kind: "event", event: "metadata", data: { run_id: run.runId } });
    expect(items.at(-1)!.kind).toBe("end");
    expect((await b.stores.runs.get(run.runId))?.status).toBe("interrupted");

    // A frees the thread right after the end it published: B's queued run takes it on A's release signal.
    const second = await b.runs.create(request(threadId, "two", { strategy: "enqueue" }));
    expect((await second.done).status).toBe("success");
    expect((await a.runs.wait(second.runId))?.status).toBe("success");
  });

  it("a thread busy in another process is busy here too (its run lock), and free again once that run ended", async () => {
    const { a, b, gate } = await twoSharedRuntimes("runs_busy", "done");
    const threadId = `busy-${Date.now()}`;
    await a.stores.threads.create({ threadId, userId: "u1", status: "idle", metadata: {}, displayName: null, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() });
    expect(await b.runs.isThreadBusy(threadId)).toBe(false);

    const run = await a.runs.create(request(threadId, "one"));
    await gate.inside;
    expect(await a.runs.isThreadBusy(threadId)).toBe(true);
    // B has nothing of the thread in memory; the run lock says A's run holds it.
    expect(b.runs.hasWorkInFlight(threadId)).toBe(false);
    expect(await b.runs.isThreadBusy(threadId)).toBe(true);

    gate.open();
    expect((await run.done).status).toBe("success");
    expect(await b.runs.isThreadBusy(threadId)).toBe(false);
    expect(await a.runs.isThreadBusy(threadId)).toBe(false);
  });
});
