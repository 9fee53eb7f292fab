/**
 * Two run services ("processes") over one PostgreSQL database and one Redis,
 * each with its own pool, checkpoint store, Redis connections and agent, on
 * one injected clock: a lease whose heartbeats are late past grace is taken
 * over, and the old owner can commit nothing afterwards (its checkpoint
 * writes carry its lease epoch and the store refuses them), a rollback
 * cancel of an orphaned run restores the thread, and a run that carried
 * request-scoped secrets is ended with why instead of running without them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { openPostgresStorage } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";
import { createAgent } from "../../src/runtime";
import { openRedisRunTransport, RunService } from "../../src/runs";
import type { RunBackends, StreamItem } from "../../src/runs";
import type { RedisRunTransport } from "../../src/runs/bridge/redis-transport";
import type { LocalRun } from "../../src/runs/local-run";
import { runTakeoverFor } from "../../src/runs/takeover";
import type { RunTakeover } from "../../src/runs/takeover";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";
import { tool } from "../../src/tools";
import { runRequest } from "./run-request";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;
const prefix = `deerflow-fencing:${process.pid}:${Date.now().toString(36)}`;
const OWNERSHIP = { leaseMs: 30_000, graceMs: 10_000, heartbeat: true };
/** Past every lease taken at the clock's start, and past its grace. */
const LATE = OWNERSHIP.leaseMs + OWNERSHIP.graceMs + 1;

/** A tool that holds its run until the test opens it (or the run is aborted); answers with its process's name. */
class Gate {
  private opened!: () => void;
  private readonly gate = new Promise<void>((r) => (this.opened = r));
  private signalEntered!: () => void;
  readonly entered = new Promise<void>((r) => (this.signalEntered = r));
  calls = 0;
  constructor(readonly name: string) {}
  readonly tool = tool({
    name: "gate",
    description: "Wait for the test",
    schema: z.object({}),
    execute: async (_args, rt) => {
      this.calls++;
      this.signalEntered();
      await new Promise<void>((resolve, reject) => {
        void this.gate.then(resolve);
        rt.signal.addEventListener("abort", () => reject(rt.signal.reason ?? new Error("aborted")), { once: true });
      });
      return `opened by ${this.name}`;
    },
  });
  open(): void {
    this.opened();
  }
}

/** A tool with a side effect the test counts (it must never run on a stale owner). */
function counterTool(counter: { n: number }) {
  return tool({ name: "count", description: "Count", schema: z.object({}), execute: async () => `counted ${++counter.n}` });
}

const callGate: ScriptStep = { text: "waiting", toolCalls: [{ name: "gate", args: {} }] };
const callCount: ScriptStep = { text: "counting", toolCalls: [{ name: "count", args: {} }] };

interface Proc {
  name: string;
  storage: PostgresStorage;
  transport: RedisRunTransport;
  runtime: DeerFlowRuntime;
  service: RunService;
  takeover: RunTakeover;
  model: ScriptedModel;
  gate: Gate;
  counter: { n: number };
  logs: string[];
}

const request = runRequest;

/** Everything a subscription receives until `end` or `gap`. */
function collect(service: RunService, runId: string, lastEventId: string | null = null): Promise<StreamItem[]> {
  return new Promise((resolve) => {
    const items: StreamItem[] = [];
    service.subscribe(runId, lastEventId, (item) => {
      items.push(item);
      if (item.kind !== "event") resolve(items);
    });
  });
}

function messagesOf(values: unknown): string[] {
  return ((values as { messages?: Array<{ type: string; content: unknown }> }).messages ?? []).map((m) => `${m.type}:${String(m.content)}`);
}

describe.skipIf(!PG || !REDIS)("run takeover on PostgreSQL + Redis: lease fencing, orphan rollback, secrets", () => {
  let db: FreshDatabase;
  let admin: Redis;
  const clock = { now: 1_000_000 };
  const dirs: string[] = [];
  let procs: Proc[] = [];
  let threads = 0;

  beforeAll(async () => {
    db = await freshPostgresDatabase(PG!, "fencing");
    admin = new Redis(REDIS!);
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      await p.takeover.stop();
      p.gate.open();
      await p.service.close();
      await p.runtime.close();
      await p.transport.close();
      await p.storage.close();
    }
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** One "process": its own pool, stores, Redis connections, model and agent, on the shared clock. */
  async function proc(name: string, steps: ScriptStep[], own: { now: number } = clock): Promise<Proc> {
    const logs: string[] = [];
    const log = (m: string) => logs.push(m);
    const storage = await openPostgresStorage({ url: db.url, log, max: 4 });
    const transport = await openRedisRunTransport({ url: REDIS!, queueMaxsize: 256, ttlSeconds: 600, log, keyPrefix: `${prefix}:stream_bridge`, signalsChannel: `${prefix}:signals` });
    const model = new ScriptedModel(steps);
    const gate = new Gate(name);
    const counter = { n: 0 };
    const checkpointer = storage.checkpointStore;
    const dir = mkdtempSync(path.join(tmpdir(), `df-fence-${name}-`));
    dirs.push(dir);
    const runtime = await DeerFlowRuntime.open({
      dataDir: dir,
      checkpointer,
      stores: storage.stores,
      log,
      agentFactory: () => createAgent({ model, tools: [gate.tool, counterTool(counter)], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    const backends: RunBackends = {
      ownerId: name,
      shared: true,
      lock: storage.runLock,
      leases: storage.runLeases,
      bridge: transport.bridge,
      signals: transport.signals,
      ownership: OWNERSHIP,
      close: async () => undefined,
    };
    const service = new RunService({ host: runtime, backends, log, clock: () => own.now });
    // rounds only when the test asks (no timer fires: the manual timers are never run)
    const takeover = runTakeoverFor(service, { log, now: () => own.now, timers: { setTimeout: () => 0, clearTimeout: () => undefined } });
    const p = { name, storage, transport, runtime, service, takeover, model, gate, counter, logs };
    procs.push(p);
    return p;
  }

  const thread = () => `fence-${process.pid}-${++threads}`;

  /** Every checkpoint row of a thread, oldest first (id, writer, run). */
  async function checkpointRows(storage: PostgresStorage, threadId: string): Promise<string[]> {
    const res = await storage.pool.query<{ checkpoint_id: string }>("SELECT checkpoint_id FROM deerflow_checkpoints WHERE thread_id = $1 ORDER BY seq", [threadId]);
    return res.rows.map((r) => r.checkpoint_id);
  }

  it("late heartbeats: another process takes over; the old owner's next commit is refused, it runs no tool and publishes nothing more", async () => {
    // A: asks for the gate (held), then would ask for the counting tool and answer. B: the same run from its head.
    // A's clock does not see its lease run out (its heartbeats look on time to itself; B's clock is ahead): only the
    // fence in the checkpoint store stops it.
    const clockA = { now: clock.now };
    const a = await proc("A", [callGate, callCount, "A's answer (never stored)"], clockA);
    const b = await proc("B", ["B's answer"]);
    b.gate.open();
    const tid = thread();
    const run = await a.service.create(request(tid, "go"));
    await a.gate.entered;
    const epochA = (await a.storage.pool.query("SELECT epoch FROM deerflow_run_leases WHERE run_id = $1", [run.runId])).rows[0].epoch;
    // A's heartbeats are late past grace (the clock moved, no renewal came): B's takeover claims the run.
    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [run.runId], failed: [] });
    const onB = b.service.get(run.runId)!;
    expect(await onB.done).toMatchObject({ status: "success" });
    await onB.recorded;
    const afterTakeover = await checkpointRows(b.storage, tid);
    const epochNow = (await a.storage.pool.query("SELECT epoch FROM deerflow_run_leases WHERE run_id = $1", [run.runId])).rows;
    // (B released the lease at its end: no epoch is A's any more either way)
    expect(epochNow.every((r) => Number(r.epoch) > Number(epochA))).toBe(true);

    // A wakes up: its tool returns, its next checkpoint write carries its old epoch.
    a.gate.open();
    const end = await run.done;
    expect(end.status).toBe("interrupted");
    expect(end.error).toMatch(/executed by another process now/);
    expect(a.logs.join("\n")).toMatch(new RegExp(`run ${run.runId} was taken over by another process \\(Refused checkpoint .* lease epoch ${epochA}`));
    // No tool ran on A after the refusal, and nothing of A's landed after the takeover.
    expect(a.counter.n).toBe(0);
    expect(b.counter.n).toBe(0);
    expect(await checkpointRows(b.storage, tid)).toEqual(afterTakeover);
    const state = await b.runtime.readState(tid);
    const messages = messagesOf(state!.values);
    // (how B's resumed run treats the pending gate call is the agent's business: only A's writes matter here)
    expect(messages.filter((m) => !m.startsWith("tool:"))).toEqual(["human:go", "ai:waiting", "ai:B's answer"]);
    expect(messages.join("\n")).not.toContain("opened by A");
    // The record is B's: success, not overwritten by the stale owner.
    expect(await b.runtime.stores.runs.get(run.runId)).toMatchObject({ status: "success", error: null });
    // The stream (read afresh from Redis): one end, no error, nothing A produced after the takeover.
    const stream = await collect(b.service, run.runId);
    const text = JSON.stringify(stream);
    expect(stream.filter((i) => i.kind === "end")).toHaveLength(1);
    expect(stream.at(-1)?.kind).toBe("end");
    expect(stream.some((i) => i.kind === "event" && i.event === "error")).toBe(false);
    expect(text).toContain("B's answer");
    expect(text).not.toContain("opened by A");
    expect(text).not.toContain("counting");
    const stored = JSON.stringify(await admin.xrange(`${prefix}:stream_bridge:${run.runId}`, "-", "+"));
    expect(stored).toContain("B's answer");
    expect(stored).not.toContain("opened by A");
  });

  it("an owner that stalled past lease + grace (one clock) stops at its next event, before it commits or publishes anything", async () => {
    const a = await proc("A", [callGate, callCount, "never"]);
    const b = await proc("B", ["B's answer"]);
    b.gate.open();
    const tid = thread();
    const run = await a.service.create(request(tid, "stall"));
    await a.gate.entered;
    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [run.runId] });
    const onB = b.service.get(run.runId)!;
    expect((await onB.done).status).toBe("success");
    await onB.recorded;
    const rows = await checkpointRows(b.storage, tid);
    a.gate.open();
    expect(await run.done).toMatchObject({ status: "interrupted", error: expect.stringMatching(/executed by another process now/) });
    expect(a.logs.join("\n")).toMatch(new RegExp(`the lease of run ${run.runId} ran out \\d+ ms past its grace without a renewal`));
    expect(a.counter.n).toBe(0);
    expect(a.model.callCount).toBe(1);
    expect(await checkpointRows(b.storage, tid)).toEqual(rows);
    const stored = JSON.stringify(await admin.xrange(`${prefix}:stream_bridge:${run.runId}`, "-", "+"));
    expect(stored).not.toContain("opened by A");
    expect(await b.runtime.stores.runs.get(run.runId)).toMatchObject({ status: "success" });
  });

  it("the stale owner's own subscribers are let go (error at the last stored id, then end) and follow the new owner from there", async () => {
    const a = await proc("A", [callGate, callCount, "never"]);
    const b = await proc("B", ["B's answer"]);
    b.gate.open();
    const tid = thread();
    const run = await a.service.create(request(tid, "watch me"));
    // a client of A's, streaming the run from A's local window
    const onA: StreamItem[] = [];
    a.service.subscribe(run.runId, null, (item) => onA.push(item));
    await a.gate.entered;
    // (what A published so far is in Redis: the handle is A's local run)
    await (await (run as LocalRun).writer).flush();
    const seenBefore = onA.length;
    expect(seenBefore).toBeGreaterThan(0);
    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [run.runId] });
    const onB = b.service.get(run.runId)!;
    expect((await onB.done).status).toBe("success");
    await onB.recorded;
    // A wakes: its next event finds the lease gone; it stops the run as taken over
    a.gate.open();
    expect((await run.done).status).toBe("interrupted");
    // its client is let go at once: an error carrying the last id Redis holds of A's, then end; nothing A produced after
    const tail = onA.slice(seenBefore);
    expect(tail.map((i) => (i.kind === "event" ? i.event : i.kind))).toEqual(["error", "end"]);
    const error = tail[0] as Extract<StreamItem, { kind: "event" }>;
    expect(error.data).toMatchObject({ name: "StreamBridgeError", message: expect.stringMatching(/executed by another process now/) });
    const lastOfA = onA[seenBefore - 1] as Extract<StreamItem, { kind: "event" }>;
    expect(error.id).toBe(lastOfA.id);
    // nothing of A's was stored after it, nor any end of A's
    const whole = await collect(b.service, run.runId);
    const wholeEvents = whole.filter((i): i is Extract<StreamItem, { kind: "event" }> => i.kind === "event");
    expect(wholeEvents.slice(0, seenBefore).map((i) => i.id)).toEqual(onA.slice(0, seenBefore).map((i) => (i as { id: string }).id));
    expect(whole.filter((i) => i.kind === "end")).toHaveLength(1);
    // reconnecting with the error's id (on either process) gives exactly the new owner's events, to its end
    for (const p of [a, b]) {
      const rest = await collect(p.service, run.runId, error.id);
      expect(rest.map((i) => (i.kind === "event" ? i.id : i.kind))).toEqual(whole.slice(seenBefore).map((i) => (i.kind === "event" ? i.id : i.kind)));
      expect(JSON.stringify(rest)).toContain("B's answer");
      expect(rest.at(-1)?.kind).toBe("end");
    }
  });

  it("a rollback cancel of an orphaned run restores the thread to before the run and ends it as a local rollback does", async () => {
    const a = await proc("A", ["before", callGate, "never"]);
    const b = await proc("B", []);
    const tid = thread();
    await (await a.service.create(request(tid, "zero"))).done;
    const beforeRun = messagesOf((await a.runtime.readState(tid))!.values);
    const run = await a.service.create(request(tid, "one"));
    await a.gate.entered;
    expect(messagesOf((await b.runtime.readState(tid))!.values)).toEqual([...beforeRun, "human:one", "ai:waiting"]);
    const tail = collect(b.service, run.runId);
    // A looks dead (late past grace): the cancel from B ends the run itself, and rolls it back.
    clock.now += LATE;
    await b.service.cancel(run.runId, "rollback", true);
    expect(await b.runtime.stores.runs.get(run.runId)).toMatchObject({ status: "error", error: "Rolled back by user" });
    expect(messagesOf((await b.runtime.readState(tid))!.values)).toEqual(beforeRun);
    const items = await tail;
    expect(items.at(-1)?.kind).toBe("end");
    expect(items.some((i) => i.kind === "event" && i.event === "error")).toBe(false);
    // The thread is free again, and A (only late) can commit nothing on the rolled-back thread.
    const rows = await checkpointRows(b.storage, tid);
    a.gate.open();
    expect((await run.done).status).toBe("interrupted");
    expect(await checkpointRows(b.storage, tid)).toEqual(rows);
    expect(await b.runtime.stores.runs.get(run.runId)).toMatchObject({ status: "error", error: "Rolled back by user" });
    expect(await b.service.isThreadBusy(tid)).toBe(false);
  });

  it("a run that carried request-scoped secrets is ended with why by the takeover; the values reach neither PostgreSQL nor Redis", async () => {
    const SECRET = `sekrit-${Date.now().toString(36)}-value`;
    const a = await proc("A", [callGate, "never"]);
    const b = await proc("B", ["must not run"]);
    const tid = thread();
    const run = await a.service.create(request(tid, "uses a secret", { context: { secrets: { API_TOKEN: SECRET } } }));
    await a.gate.entered;
    const record = await b.runtime.stores.runs.get(run.runId);
    expect(record?.execution?.secretNames).toEqual(["API_TOKEN"]);
    const tail = collect(b.service, run.runId);

    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [], failed: [run.runId] });
    const ended = await b.runtime.stores.runs.get(run.runId);
    expect(ended).toMatchObject({ status: "error", stopReason: "secrets_not_resumable" });
    expect(ended!.error).toMatch(/its request carried secrets \(API_TOKEN\), which are never stored; send the request again/);
    const items = await tail;
    const error = items.find((i) => i.kind === "event" && i.event === "error");
    expect(error).toMatchObject({ data: { name: "RunResumeError", code: "secrets_not_resumable" } });
    expect(items.at(-1)?.kind).toBe("end");
    expect(b.model.callCount).toBe(0);
    // the old owner, only late, stops without overwriting the end
    a.gate.open();
    expect((await run.done).status).toBe("interrupted");
    expect((await b.runtime.stores.runs.get(run.runId))?.status).toBe("error");

    // Nothing stored anywhere holds the value: every row of every table, every key under the bridge's prefix.
    const tables = await b.storage.pool.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema()");
    expect(tables.rows.length).toBeGreaterThan(5);
    for (const { t } of tables.rows) {
      const dump = await b.storage.pool.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${t}" x`);
      expect(dump.rows.some((r) => r.j.includes(SECRET)), t).toBe(false);
    }
    const keys = await admin.keys(`${prefix}:*`);
    expect(keys).toContain(`${prefix}:stream_bridge:${run.runId}`);
    for (const key of keys) {
      const type = await admin.type(key);
      const content = type === "stream" ? JSON.stringify(await admin.xrange(key, "-", "+")) : type === "string" ? String(await admin.get(key)) : type;
      expect(content.includes(SECRET), key).toBe(false);
    }
  });

  it("a joiner on another process follows a run from its first event, even one its owner has not stored yet; a run that streams nothing still tells joiners its end", async () => {
    const a = await proc("A", ["hello from A", "second answer", callGate, "quiet answer"]);
    const b = await proc("B", []);
    const eventsOf = (items: StreamItem[]) => items.map((i) => (i.kind === "event" ? i.event : i.kind));

    // 1. The record is stored and says running, the first event is not in Redis yet (A holds it back until the
    // record write resolves, which the test holds): B must not call the run ended.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const create = a.runtime.stores.runs.create.bind(a.runtime.stores.runs);
    a.runtime.stores.runs.create = async (rec) => {
      await create(rec);
      await held;
    };
    const tid = thread();
    const run = await a.service.create(request(tid, "early join"), { waitForStore: false });
    await expect.poll(async () => (await b.runtime.stores.runs.get(run.runId))?.status).toBe("running");
    a.runtime.stores.runs.create = create;
    expect(await admin.exists(`${prefix}:stream_bridge:${run.runId}`)).toBe(0);
    expect(await b.service.hasStream(run.runId)).toBe(true);
    const joined = collect(b.service, run.runId);
    // a wait from the other process waits for the run's end too (it used to answer the record as it was: running)
    const waited = b.service.wait(run.runId);
    release();
    expect(await waited).toMatchObject({ status: "success" });
    const items = await joined;
    expect(eventsOf(items)[0]).toBe("metadata");
    expect(eventsOf(items).at(-1)).toBe("end");
    expect(JSON.stringify(items)).toContain("hello from A");
    expect((await run.done).status).toBe("success");

    // 2. As a client sees it: on the owner's `metadata` (delivered here before Redis has it), ask the other process.
    const tid2 = thread();
    let onMetadata: Promise<[boolean, StreamItem[]]> | undefined;
    const second = await a.service.create(request(tid2, "join on metadata"), { waitForStore: false });
    a.service.subscribe(second.runId, null, (item) => {
      if (item.kind === "event" && item.event === "metadata" && !onMetadata) onMetadata = Promise.all([b.service.hasStream(second.runId), collect(b.service, second.runId)]);
    });
    await second.done;
    const [had, followed] = await onMetadata!;
    expect(had).toBe(true);
    expect(eventsOf(followed)[0]).toBe("metadata");
    expect(eventsOf(followed).at(-1)).toBe("end");
    expect(JSON.stringify(followed)).toContain("second answer");

    // 3. A run that streams nothing (the embedded client's): a joiner waits while it runs and gets its end.
    const tid3 = thread();
    const quiet = await a.service.create(request(tid3, "quiet", { stream: false }));
    await a.gate.entered;
    expect(await b.service.hasStream(quiet.runId)).toBe(true);
    let endedEarly = false;
    let opened = false;
    const tail = new Promise<StreamItem[]>((resolve) => {
      const got: StreamItem[] = [];
      b.service.subscribe(quiet.runId, null, (item) => {
        got.push(item);
        if (item.kind !== "event") {
          endedEarly = !opened;
          resolve(got);
        }
      });
    });
    opened = true;
    a.gate.open();
    expect((await quiet.done).status).toBe("success");
    expect(eventsOf(await tail)).toEqual(["end"]);
    expect(endedEarly).toBe(false);
    // an ended run whose stream is gone (or never had one) has none to follow
    await admin.del(`${prefix}:stream_bridge:${quiet.runId}`);
    expect(await b.service.hasStream(quiet.runId)).toBe(false);
  });

  it("a stale owner's late end is refused by the run store: the new owner's record and thread stay, and the stale owner stops as taken over", async () => {
    // A's clock never sees its lease run out, and A is cancelled by its own client after B finished the run: A's
    // end (`interrupted`, no checkpoint to refuse) reaches the record store under A's old lease epoch.
    const clockA = { now: clock.now };
    const a = await proc("A", [callGate, "never"], clockA);
    const b = await proc("B", ["B's answer"]);
    b.gate.open();
    const tid = thread();
    const run = await a.service.create(request(tid, "late end"));
    await a.gate.entered;
    const epochA = Number((await a.storage.pool.query("SELECT epoch FROM deerflow_run_leases WHERE run_id = $1", [run.runId])).rows[0].epoch);
    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [run.runId] });
    const onB = b.service.get(run.runId)!;
    expect((await onB.done).status).toBe("success");
    await onB.recorded;
    const before = await b.runtime.stores.runs.get(run.runId);
    expect(before).toMatchObject({ status: "success", error: null });
    const threadBefore = await b.runtime.stores.threads.get(tid);

    await a.service.cancel(run.runId, "interrupt", true);
    const end = await run.done;
    expect(end.status).toBe("interrupted");
    expect(end.error).toMatch(/executed by another process now/);
    await run.recorded;
    // The record and the thread are the new owner's, unchanged.
    expect(await b.runtime.stores.runs.get(run.runId)).toEqual(before);
    expect(await b.runtime.stores.threads.get(tid)).toEqual(threadBefore);
    expect(a.logs.join("\n")).toMatch(new RegExp(`the end of run ${run.runId} was not recorded: Refused the write of run ${run.runId}'s record .*lease epoch ${epochA}`));
    // The stream holds B's end once, nothing of A's after it.
    const stream = await collect(b.service, run.runId);
    expect(stream.filter((i) => i.kind === "end")).toHaveLength(1);
    expect(stream.some((i) => i.kind === "event" && i.event === "error")).toBe(false);
  });

  it("run record writes under a lease epoch: a stale epoch is refused with run_stale_owner and writes nothing, the current one writes, an unfenced patch is not merged into a refused one", async () => {
    const a = await proc("A", ["done"]);
    const tid = thread();
    const run = await a.service.create(request(tid, "fence me"));
    await run.done;
    await run.recorded;
    const runs = a.runtime.stores.runs;
    const leases = a.storage.runLeases;
    const now = clock.now;
    const first = (await leases.claim!(run.runId, tid, "X", now + 1000, now))!;
    const second = (await leases.claim!(run.runId, tid, "Y", now + 2000, now + 1001))!;
    expect(second).toBeGreaterThan(first);
    // handed in together: the stale fenced patch and an unfenced one go out as separate statements
    const stale = runs.update(run.runId, { status: "error", error: "stale" }, { fence: { epoch: first } });
    const plain = runs.update(run.runId, { modelName: "plain-write" });
    await expect(stale).rejects.toMatchObject({ code: "run_stale_owner", details: { run_id: run.runId, epoch: first, current_epoch: second } });
    await plain;
    expect(await runs.get(run.runId)).toMatchObject({ status: "success", error: null, modelName: "plain-write" });
    await runs.update(run.runId, { error: "current owner" }, { fence: { epoch: second } });
    expect(await runs.get(run.runId)).toMatchObject({ error: "current owner" });
    // without any lease the fenced write is refused too; an unknown run stays a no-op
    await leases.release(run.runId, "Y");
    await expect(runs.update(run.runId, { error: "no lease" }, { fence: { epoch: second } })).rejects.toMatchObject({ code: "run_stale_owner", details: { current_epoch: null } });
    await runs.update("no-such-run", { error: "x" }, { fence: { epoch: second } });
    expect(await runs.get(run.runId)).toMatchObject({ error: "current owner" });
  });

  it("ending a run as not resumable happens under a fresh lease claim: a run another process resumed meanwhile is left to it", async () => {
    const a = await proc("A", [callGate, "never"]);
    const b = await proc("B", [callGate, "finished on B"]);
    const c = await proc("C", []);
    const tid = thread();
    const run = await a.service.create(request(tid, "resumed elsewhere"));
    await a.gate.entered;
    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [run.runId] });
    await b.gate.entered;
    // C's verdict on the same expired lease arrives late (its takeover round read the lease before B claimed it).
    await c.service.abandon(run.runId, "cannot be resumed here");
    expect(await c.runtime.stores.runs.get(run.runId)).toMatchObject({ status: "running", error: null });
    expect(c.logs.join("\n")).toMatch(new RegExp(`run ${run.runId} was not ended here: another process holds its lease`));
    b.gate.open();
    expect((await b.service.get(run.runId)!.done).status).toBe("success");
    const stream = await collect(b.service, run.runId);
    expect(stream.some((i) => i.kind === "event" && i.event === "error")).toBe(false);
  });

  it("a run without secrets is resumed by the takeover (its stored settings suffice)", async () => {
    const a = await proc("A", [callGate, "never"]);
    const b = await proc("B", ["resumed without secrets"]);
    b.gate.open();
    const tid = thread();
    const run = await a.service.create(request(tid, "no secrets", { context: { model_name: "m" } }));
    await a.gate.entered;
    expect((await b.runtime.stores.runs.get(run.runId))?.execution?.secretNames).toBeUndefined();
    clock.now += LATE;
    expect(await b.takeover.round()).toMatchObject({ resumed: [run.runId] });
    expect((await b.service.get(run.runId)!.done).status).toBe("success");
    expect(messagesOf((await b.runtime.readState(tid))!.values).at(-1)).toBe("ai:resumed without secrets");
  });
});
