import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { RunServiceError } from "../../src/errors";
import { humanMessage } from "../../src/messages";
import { createMemoryStores } from "../../src/persistence";
import { MemoryRunLeases, MemoryRunLock } from "../../src/persistence";
import { createAgent } from "../../src/runtime";
import { createMemoryRunSignals, createMemoryStreamBridge, RunService } from "../../src/runs";
import type { RunBackends, StreamItem } from "../../src/runs";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";
import { runTakeoverFor } from "../../src/runs/takeover";
import { tool } from "../../src/tools";
import { runRequest } from "./run-request";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** A tool that holds the run until the test opens the gate (or the run is cancelled). */
class Gate {
  private opened!: () => void;
  private readonly gate = new Promise<void>((r) => (this.opened = r));
  private signalEntered!: () => void;
  /** Resolves once a run is inside the tool. */
  readonly entered = new Promise<void>((r) => (this.signalEntered = r));
  readonly tool = tool({
    name: "gate",
    description: "Wait for the test",
    schema: z.object({}),
    execute: async (_args, rt) => {
      this.signalEntered();
      await new Promise<void>((resolve, reject) => {
        void this.gate.then(resolve);
        rt.signal.addEventListener("abort", () => reject(rt.signal.reason ?? new Error("aborted")), { once: true });
      });
      return "opened";
    },
  });
  open(): void {
    this.opened();
  }
}

const callGate: ScriptStep = { text: "waiting", toolCalls: [{ name: "gate", args: {} }] };

async function runtimeWith(steps: ScriptStep[], gate = new Gate()) {
  const dir = mkdtempSync(path.join(tmpdir(), "df-runs-"));
  const model = new ScriptedModel(steps);
  const checkpointer = new MemoryCheckpointStore();
  const runtime = await DeerFlowRuntime.open({
    dataDir: dir,
    checkpointer,
    stores: createMemoryStores(),
    log: () => undefined,
    agentFactory: () => createAgent({ model, tools: [gate.tool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
  });
  open.push(runtime);
  return { runtime, model, gate };
}

const request = runRequest;

/** Everything a subscription receives until `end` or `gap`. */
function collect(subscribe: (listener: (item: StreamItem) => void) => () => void): Promise<StreamItem[]> {
  return new Promise((resolve) => {
    const items: StreamItem[] = [];
    subscribe((item) => {
      items.push(item);
      if (item.kind !== "event") resolve(items);
    });
  });
}

const eventNames = (items: StreamItem[]) => items.map((i) => (i.kind === "event" ? i.event : i.kind));

function aiTexts(values: unknown): string[] {
  const messages = ((values as { messages?: Array<{ type: string; content: unknown }> }).messages ?? []);
  return messages.filter((m) => m.type === "ai").map((m) => String(m.content));
}

describe("RunService", () => {
  it("creates and executes a run: metadata first, the run's events, end; the record keeps its execution settings without secrets", async () => {
    const { runtime } = await runtimeWith(["hello"]);
    const run = await runtime.runs.create(request("t1", "hi", { context: { secrets: { API_TOKEN: "s3cret" }, model_name: "m" } }));
    const items = await collect((l) => run.subscribe(null, l));
    const end = await run.done;
    expect(end.status).toBe("success");
    expect(eventNames(items)[0]).toBe("metadata");
    expect(items[0]).toMatchObject({ kind: "event", data: { run_id: run.runId, thread_id: "t1" } });
    expect(eventNames(items)).toContain("values");
    expect(eventNames(items)).toContain("messages");
    expect(eventNames(items).at(-1)).toBe("end");
    await run.recorded;
    const rec = await runtime.runs.wait(run.runId);
    expect(rec).toMatchObject({ status: "success", multitaskStrategy: "reject" });
    expect(rec!.execution).toMatchObject({ recursionLimit: 25, streamModes: ["values", "messages"], subgraphs: false, context: { model_name: "m", thread_id: "t1", run_id: run.runId, user_id: "u1" } });
    expect(JSON.stringify(rec!.execution)).not.toContain("s3cret");
    expect(await runtime.runs.list("t1")).toHaveLength(1);
    expect((await runtime.stores.threads.get("t1"))?.status ?? "idle").toBe("idle");
  });

  it("reject refuses a second run on a busy thread; enqueue runs it after the first", async () => {
    const { runtime, gate } = await runtimeWith([callGate, "first", "second"]);
    const first = await runtime.runs.create(request("t2", "one"));
    await gate.entered;
    await expect(runtime.runs.create(request("t2", "two"))).rejects.toMatchObject({ code: "run_conflict" });
    const second = await runtime.runs.create(request("t2", "two", { strategy: "enqueue" }));
    expect(second.status).toBe("pending");
    gate.open();
    expect((await first.done).status).toBe("success");
    expect((await second.done).status).toBe("success");
    const state = await runtime.readState("t2");
    expect(aiTexts(state!.values)).toEqual(["waiting", "first", "second"]);
  });

  it("interrupt stops the active run and starts the new one; rollback also restores the thread", async () => {
    const { runtime, gate } = await runtimeWith(["before", callGate, "after interrupt"]);
    await (await runtime.runs.create(request("t3", "zero"))).done;
    const a = await runtime.runs.create(request("t3", "one"));
    await gate.entered;
    const b = await runtime.runs.create(request("t3", "two", { strategy: "interrupt" }));
    expect((await a.done).status).toBe("interrupted");
    expect((await b.done).status).toBe("success");
    expect(aiTexts((await runtime.readState("t3"))!.values)).toEqual(["before", "waiting", "after interrupt"]);

    const gate2 = new Gate();
    const { runtime: rt2 } = await runtimeWith(["before", callGate, "after rollback"], gate2);
    await (await rt2.runs.create(request("t4", "zero"))).done;
    const c = await rt2.runs.create(request("t4", "one"));
    await gate2.entered;
    const d = await rt2.runs.create(request("t4", "two", { strategy: "rollback" }));
    expect(await c.done).toMatchObject({ status: "error", error: "Rolled back by user" });
    expect((await d.done).status).toBe("success");
    // the rolled-back run's messages are gone
    expect(aiTexts((await rt2.readState("t4"))!.values)).toEqual(["before", "after rollback"]);
  });

  it("cancel: interrupt with wait, unknown and finished runs refused with their codes", async () => {
    const { runtime, gate } = await runtimeWith([callGate]);
    const run = await runtime.runs.create(request("t5", "one"));
    await gate.entered;
    await runtime.runs.cancel(run.runId, "interrupt", true);
    expect(run.status).toBe("interrupted");
    expect((await runtime.stores.runs.get(run.runId))?.status).toBe("interrupted");
    await expect(runtime.runs.cancel(run.runId, "interrupt", false)).rejects.toMatchObject({ code: "run_not_cancellable" });
    await expect(runtime.runs.cancel("nope", "interrupt", false)).rejects.toBeInstanceOf(RunServiceError);
    await expect(runtime.runs.cancel("nope", "interrupt", false)).rejects.toMatchObject({ code: "run_not_found" });
  });

  it("streams from an event id, and an id older than the retained window yields one gap", async () => {
    const { runtime, gate } = await runtimeWith([callGate, "one two three four five six seven eight nine ten"]);
    gate.open();
    runtime.runs.configure({ memoryReplay: { queueMaxsize: 4, ttlSeconds: 60 } });
    const run = await runtime.runs.create(request("t6", "x", { streamModes: ["messages", "values", "updates"] }));
    await run.done;
    const all = await collect((l) => runtime.runs.subscribe(run.runId, null, l));
    const events = all.filter((i): i is Extract<StreamItem, { kind: "event" }> => i.kind === "event");
    expect(events).toHaveLength(4);
    const after = await collect((l) => runtime.runs.subscribe(run.runId, events[2].id, l));
    expect(after.map((i) => (i.kind === "event" ? i.id : i.kind))).toEqual([events[3].id, "end"]);
    // the metadata event (seq 0) was evicted long ago
    const gap = await collect((l) => runtime.runs.subscribe(run.runId, `${events[0].id.split("-")[0]}-0`, l));
    expect(gap).toHaveLength(1);
    expect(gap[0]).toMatchObject({ kind: "gap", data: { code: "stream_replay_gap", run_id: run.runId, recovery: "reload_durable_state" } });
    expect(await runtime.runs.hasStream(run.runId)).toBe(true);
    expect(await runtime.runs.hasStream("never-ran")).toBe(false);
  });

  it("an in-process caller follows the harness events through onEvent and publishes nothing with stream: false", async () => {
    const { runtime } = await runtimeWith(["quiet"]);
    const modes: string[] = [];
    const run = await runtime.runs.create(request("t7", "x", { stream: false, onEvent: (e) => void modes.push(e.mode) }));
    expect((await run.done).status).toBe("success");
    expect(modes).toContain("values");
    expect(await runtime.runs.hasStream(run.runId)).toBe(false);
  });

  it("a checkpoint id that does not exist is refused before anything is stored", async () => {
    const { runtime } = await runtimeWith(["never"]);
    await expect(runtime.runs.create(request("t8", "x", { checkpointId: "missing" }))).rejects.toMatchObject({ code: "checkpoint_not_found" });
    expect(await runtime.runs.list("t8")).toEqual([]);
  });
});

/** Two run services ("processes") over one set of stores and shared lock, leases, bridge and signals. */
async function twoProcesses(steps: ScriptStep[], ownership: Partial<RunBackends["ownership"]> = {}) {
  const { runtime, model, gate } = await runtimeWith(steps);
  const lock = new MemoryRunLock();
  const leases = new MemoryRunLeases();
  const bridge = createMemoryStreamBridge({ queueMaxsize: 256, ttlSeconds: 60 });
  const signals = createMemoryRunSignals();
  const backends = (ownerId: string): RunBackends => ({
    ownerId,
    shared: true,
    lock,
    leases,
    bridge,
    signals,
    ownership: { leaseMs: 30_000, graceMs: 10_000, heartbeat: true, ...ownership },
    close: async () => undefined,
  });
  const a = new RunService({ host: runtime, backends: backends("A"), log: () => undefined });
  const b = new RunService({ host: runtime, backends: backends("B"), log: () => undefined });
  open.push(a, b);
  return { runtime, model, gate, a, b, lock, leases, bridge };
}

describe("RunService across processes (shared backends)", () => {
  it("the accepting process executes and holds the lease; another process joins, cancels (the owner aborts) and sees the end", async () => {
    const { a, b, gate, leases, runtime } = await twoProcesses([callGate]);
    const run = await a.create(request("x1", "one"));
    await gate.entered;
    expect((await leases.get(run.runId))?.owner).toBe("A");
    const joined = collect((l) => b.subscribe(run.runId, null, l));
    const started = performance.now();
    await b.cancel(run.runId, "interrupt", true);
    const cancelMs = performance.now() - started;
    expect(cancelMs).toBeLessThan(500);
    expect(eventNames(await joined).at(-1)).toBe("end");
    expect((await runtime.stores.runs.get(run.runId))?.status).toBe("interrupted");
    expect(await leases.get(run.runId)).toBeUndefined();
  });

  it("a new run's lease is taken before its record is written (a record never exists without a lease the takeover would find)", async () => {
    const { a, gate, leases, runtime } = await twoProcesses([callGate]);
    const seen: Array<string | undefined> = [];
    // The record store, asked to create the record: the lease is already there then.
    const create = runtime.stores.runs.create.bind(runtime.stores.runs);
    runtime.stores.runs.create = async (rec) => {
      seen.push((await leases.get(rec.runId))?.owner);
      return create(rec);
    };
    const run = await a.create(request("x0", "one"), { waitForStore: false });
    expect((await leases.get(run.runId))?.owner).toBe("A");
    await gate.entered;
    expect(seen).toEqual(["A"]);
    runtime.stores.runs.create = create;
  });

  it("a run queued behind another takes its lease before its record is written: a process that dies between the two leaves only a lease, which the takeover ends", async () => {
    const { a, b, gate, leases, runtime } = await twoProcesses([callGate]);
    const first = await a.create(request("x6", "one"));
    await gate.entered;
    const seen: Array<string | undefined> = [];
    // A dies as it hands the queued run's record to the store: the lease is there by then, the record never lands.
    let died!: (err: Error) => void;
    const create = runtime.stores.runs.create.bind(runtime.stores.runs);
    runtime.stores.runs.create = async (rec) => {
      seen.push((await leases.get(rec.runId))?.owner);
      return new Promise<void>((_, reject) => (died = reject));
    };
    const queued = await a.create(request("x6", "two", { strategy: "enqueue" }), { waitForStore: false });
    await expect.poll(() => seen.length).toBe(1);
    runtime.stores.runs.create = create;
    expect(seen).toEqual(["A"]);
    // (the run it queued behind ends; the dead process renews nothing)
    await a.cancel(first.runId, "interrupt", true);
    expect(await runtime.stores.runs.get(queued.runId)).toBeUndefined();
    // Another process's takeover, past the lease and its grace, finds the queued run's lease and ends it: no record
    // is left pending with nobody to claim it, and no lease is left behind.
    const later = Date.now() + 30_000 + 10_000 + 1_000;
    const takeover = runTakeoverFor(b, { log: () => undefined, now: () => later, timers: { setTimeout: () => 0, clearTimeout: () => undefined } });
    expect(await takeover.round()).toMatchObject({ resumed: [], failed: [queued.runId] });
    expect(await leases.get(queued.runId)).toBeUndefined();
    expect((await runtime.runs.list("x6")).map((r) => [r.runId, r.status])).toEqual([[first.runId, "interrupted"]]);
    died(new Error("the process is gone"));
    expect((await queued.done).status).toBe("error");
  });

  it("reject across processes refuses without writing a record; enqueue waits for the other process's release", async () => {
    const { a, b, gate, runtime, leases } = await twoProcesses([callGate, "first", "second"]);
    const first = await a.create(request("x2", "one"));
    await gate.entered;
    await expect(b.create(request("x2", "two"))).rejects.toMatchObject({ code: "run_conflict" });
    expect(await runtime.runs.list("x2")).toHaveLength(1);
    const second = await b.create(request("x2", "two", { strategy: "enqueue" }));
    expect(second.status).toBe("pending");
    // The queued run is B's (its lease): no other process takes it while B is alive.
    await expect.poll(async () => (await leases.get(second.runId))?.owner).toBe("B");
    await expect(a.resume(second.runId)).rejects.toMatchObject({ code: "run_not_resumable", message: expect.stringContaining("another process holds its lease") });
    gate.open();
    expect((await first.done).status).toBe("success");
    expect((await second.done).status).toBe("success");
    expect(aiTexts((await runtime.readState("x2"))!.values)).toEqual(["waiting", "first", "second"]);
  });

  it("interrupt across processes: the new run cancels the other process's run, then takes the thread", async () => {
    const { a, b, gate, runtime } = await twoProcesses([callGate, "taken over"]);
    const first = await a.create(request("x3", "one"));
    await gate.entered;
    const second = await b.create(request("x3", "two", { strategy: "interrupt" }));
    expect((await first.done).status).toBe("interrupted");
    expect((await second.done).status).toBe("success");
    expect(aiTexts((await runtime.readState("x3"))!.values)).toEqual(["waiting", "taken over"]);
  });

  it("resume continues a dead owner's run from its last checkpoint on the same stream, under the new owner's lease", async () => {
    const { a, b, runtime, bridge, leases } = await twoProcesses(["earlier answer", "resumed answer"]);
    // An earlier turn, then a run that died after storing its record and its input checkpoint.
    await (await a.create(request("x4", "zero"))).done;
    const runId = "dead-run";
    const ts = new Date().toISOString();
    await runtime.stores.runs.create({
      runId,
      threadId: "x4",
      userId: "u1",
      assistantId: "lead_agent",
      status: "running",
      metadata: {},
      kwargs: {},
      multitaskStrategy: "reject",
      createdAt: ts,
      updatedAt: ts,
      usage: { totalInputTokens: 0, totalOutputTokens: 0, totalTokens: 0, llmCallCount: 0, leadAgentTokens: 0, subagentTokens: 0, middlewareTokens: 0, messageCount: 0 },
      stopReason: null,
      error: null,
      modelName: null,
      execution: { settings: request("x4", "").settings as unknown as Record<string, unknown>, context: { thread_id: "x4", run_id: runId, user_id: "u1" }, configurable: {}, recursionLimit: 25, streamModes: ["values"], subgraphs: false },
    });
    await runtime.updateState("x4", { messages: [humanMessage("one more")] });
    const dead = await bridge.writer(runId);
    const lastSeen = dead.publish("metadata", { run_id: runId, thread_id: "x4" });
    await leases.acquire(runId, "x4", "A-dead", 1, 0);

    const tail = collect((l) => b.subscribe(runId, lastSeen, l));
    const handle = await b.resume(runId);
    expect((await leases.get(runId))?.owner).toBe("B");
    expect((await handle.done).status).toBe("success");
    const items = await tail;
    expect(eventNames(items)).not.toContain("metadata");
    expect(eventNames(items).at(-1)).toBe("end");
    expect((await runtime.stores.runs.get(runId))?.status).toBe("success");
    expect(aiTexts((await runtime.readState("x4"))!.values)).toEqual(["earlier answer", "resumed answer"]);
    await expect(b.resume(runId)).rejects.toMatchObject({ code: "run_not_resumable" });
  });

  it("a run stored without its settings is not resumable; abandon ends it with an error on its stream", async () => {
    const { b, runtime, bridge } = await twoProcesses([]);
    const ts = new Date().toISOString();
    await runtime.stores.runs.create({
      runId: "old-run", threadId: "x5", userId: "u1", assistantId: "lead_agent", status: "running", metadata: {}, kwargs: {}, multitaskStrategy: "reject",
      createdAt: ts, updatedAt: ts, usage: { totalInputTokens: 0, totalOutputTokens: 0, totalTokens: 0, llmCallCount: 0, leadAgentTokens: 0, subagentTokens: 0, middlewareTokens: 0, messageCount: 0 },
      stopReason: null, error: null, modelName: null,
    });
    await expect(b.resume("old-run")).rejects.toMatchObject({ code: "run_not_resumable" });
    const tail = collect((l) => bridge.subscribe("old-run", null, l));
    await b.abandon("old-run", "The run cannot be resumed: its settings were not stored");
    expect(eventNames(await tail)).toEqual(["error", "end"]);
    expect(await runtime.stores.runs.get("old-run")).toMatchObject({ status: "error", stopReason: "resume_failed" });
  });

  it("cancelling a run whose owner died (lease expired past grace) ends it at once as interrupted instead of waiting", async () => {
    const { b, runtime, bridge, leases } = await twoProcesses([], { leaseMs: 1000, graceMs: 500 });
    const ts = new Date().toISOString();
    await runtime.stores.runs.create({
      runId: "orphan-run", threadId: "x7", userId: "u1", assistantId: "lead_agent", status: "running", metadata: {}, kwargs: {}, multitaskStrategy: "reject",
      createdAt: ts, updatedAt: ts, usage: { totalInputTokens: 0, totalOutputTokens: 0, totalTokens: 0, llmCallCount: 0, leadAgentTokens: 0, subagentTokens: 0, middlewareTokens: 0, messageCount: 0 },
      stopReason: null, error: null, modelName: null,
    });
    // Its owner's lease ran out long ago.
    await leases.acquire("orphan-run", "x7", "A-dead", 1, 0);
    const tail = collect((l) => bridge.subscribe("orphan-run", null, l));
    await b.cancel("orphan-run", "interrupt", true);
    expect(await runtime.stores.runs.get("orphan-run")).toMatchObject({ status: "interrupted", error: null });
    expect(eventNames(await tail)).toEqual(["end"]);
    expect(await leases.get("orphan-run")).toBeUndefined();
  });

  it("a process that lost its lease to another stops the run without writing its end", async () => {
    const { a, gate, leases, runtime } = await twoProcesses([callGate], { leaseMs: 90 });
    const run = await a.create(request("x6", "one"));
    await gate.entered;
    // Another process took the lease over (this one looked dead): the next heartbeat notices.
    await leases.acquire(run.runId, "x6", "C", Date.now() + 60_000, Number.MAX_SAFE_INTEGER);
    expect((await run.done).status).toBe("interrupted");
    // the record is the new owner's to finish
    expect((await runtime.stores.runs.get(run.runId))?.status).toBe("running");
  });
});

describe("RunService: a run queued behind a run this process lost to another", () => {
  it("starts once the new owner released the thread (it is not left queued here)", async () => {
    const { b, gate, leases, lock, runtime, model } = await twoProcesses([callGate, "queued answer"], { leaseMs: 90 });
    const first = await b.create(request("q5", "one"));
    await gate.entered;
    const queued = await b.create(request("q5", "two", { strategy: "enqueue" }));
    // Another process took the active run over (this one's heartbeats looked late); the queued run stays this one's.
    await leases.acquire(first.runId, "q5", "C", Date.now() + 60_000, Number.MAX_SAFE_INTEGER);
    expect((await first.done).status).toBe("interrupted");
    // The new owner ends that run and frees the thread: the queued run starts here, on the new owner's answer.
    await lock.release("q5", first.runId);
    await b.runBackends.signals.publish({ type: "thread_released", threadId: "q5" });
    expect((await queued.done).status).toBe("success");
    expect(model.callCount).toBe(2);
    expect((await runtime.stores.runs.get(queued.runId))?.status).toBe("success");
  });
});

describe("RunService takeover with a run queued behind the dead owner's run", () => {
  it("a run waiting on this process for the thread executes once when this process resumes the run ahead of it", async () => {
    const { b, runtime, bridge, leases, lock, model } = await twoProcesses(["resumed answer", "queued answer", "a second execution"]);
    const runId = "dead-ahead";
    const ts = new Date().toISOString();
    await runtime.stores.runs.create({
      runId, threadId: "x9", userId: "u1", assistantId: "lead_agent", status: "running", metadata: {}, kwargs: {}, multitaskStrategy: "reject",
      createdAt: ts, updatedAt: ts, usage: { totalInputTokens: 0, totalOutputTokens: 0, totalTokens: 0, llmCallCount: 0, leadAgentTokens: 0, subagentTokens: 0, middlewareTokens: 0, messageCount: 0 },
      stopReason: null, error: null, modelName: null,
      execution: { settings: request("x9", "").settings as unknown as Record<string, unknown>, context: { thread_id: "x9", run_id: runId, user_id: "u1" }, configurable: {}, recursionLimit: 25, streamModes: ["values"], subgraphs: false },
    });
    await runtime.updateState("x9", { messages: [humanMessage("before the crash")] });
    const dead = await bridge.writer(runId);
    dead.publish("metadata", { run_id: runId, thread_id: "x9" });
    // The dead owner's lease is already out, its thread slot not yet: a run created now must wait for the thread.
    await leases.acquire(runId, "x9", "A-dead", 1, 0);
    await lock.acquire("x9", runId, "A-dead", Date.now() + 60_000, Date.now());
    const queued = await b.create(request("x9", "after the crash", { strategy: "enqueue" }));
    expect(queued.status).toBe("pending");
    // B's takeover resumes the dead run on the very process where the queued run waits for the thread.
    const resumed = await b.resume(runId);
    expect((await resumed.done).status).toBe("success");
    expect((await queued.done).status).toBe("success");
    await queued.recorded;
    const values = (await runtime.readState("x9"))!.values as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.map((m) => `${m.type}:${String(m.content)}`)).toEqual([
      "human:before the crash",
      "ai:resumed answer",
      "human:after the crash",
      "ai:queued answer",
    ]);
    expect(model.callCount).toBe(2);
    expect((await runtime.stores.runs.get(queued.runId))?.status).toBe("success");
  });
});

/** A stored run as a dead process left it: its record (`running` or `pending`) and its expired lease. */
async function deadRun(
  runtime: DeerFlowRuntime,
  leases: MemoryRunLeases,
  runId: string,
  threadId: string,
  status: "running" | "pending",
  extra: { input?: unknown; secretNames?: string[]; createdAt?: string } = {},
): Promise<void> {
  const ts = extra.createdAt ?? new Date().toISOString();
  await runtime.stores.runs.create({
    runId, threadId, userId: "u1", assistantId: "lead_agent", status, metadata: {}, kwargs: {}, multitaskStrategy: "enqueue",
    createdAt: ts, updatedAt: ts, usage: { totalInputTokens: 0, totalOutputTokens: 0, totalTokens: 0, llmCallCount: 0, leadAgentTokens: 0, subagentTokens: 0, middlewareTokens: 0, messageCount: 0 },
    stopReason: null, error: null, modelName: null,
    execution: {
      settings: request(threadId, "").settings as unknown as Record<string, unknown>, context: { thread_id: threadId, run_id: runId, user_id: "u1" }, configurable: {}, recursionLimit: 25, streamModes: ["values"], subgraphs: false,
      ...(extra.input ? { input: extra.input as never } : {}),
      ...(extra.secretNames ? { secretNames: extra.secretNames } : {}),
    },
  });
  await leases.acquire(runId, threadId, "A-dead", 1, 0);
}

/** The takeover loop of a service, rounds on demand only. */
const takeoverOf = (service: RunService) => runTakeoverFor(service, { log: () => undefined, timers: { setTimeout: () => 0, clearTimeout: () => undefined } });

describe("RunService takeover of a dead process's queued runs", () => {
  it("a queued run stores its input (a run that starts at once does not: its input is in its first checkpoint)", async () => {
    const { runtime, gate } = await runtimeWith([callGate, "first", "second"]);
    const first = await runtime.runs.create(request("q1", "one"));
    await gate.entered;
    const second = await runtime.runs.create(request("q1", "two", { strategy: "enqueue" }));
    expect((await runtime.stores.runs.get(first.runId))?.execution?.input).toBeUndefined();
    expect((await runtime.stores.runs.get(second.runId))?.execution?.input).toMatchObject({ update: { messages: [{ type: "human", content: "two" }] } });
    gate.open();
    expect((await second.done).status).toBe("success");
  });

  it("is started by the process that claims it, after the dead run ahead of it is resumed, exactly once across two survivors", async () => {
    const { runtime, model, b, lock, leases, bridge } = await twoProcesses(["resumed answer", "queued answer", "a second execution"]);
    const c = new RunService({ host: runtime, backends: { ...b.runBackends, ownerId: "C" }, log: () => undefined });
    open.push(c);
    await runtime.updateState("q2", { messages: [humanMessage("before the crash")] });
    const t0 = Date.now();
    await deadRun(runtime, leases, "q2-running", "q2", "running", { createdAt: new Date(t0).toISOString() });
    await deadRun(runtime, leases, "q2-queued", "q2", "pending", {
      createdAt: new Date(t0 + 1).toISOString(),
      input: { update: { messages: [humanMessage("queued on the dead process")] } },
    });
    await lock.acquire("q2", "q2-running", "A-dead", 1, 0);
    for (const id of ["q2-running", "q2-queued"]) (await bridge.writer(id)).publish("metadata", { run_id: id, thread_id: "q2" });
    const queuedStream = collect((l) => bridge.subscribe("q2-queued", null, l));
    // Both survivors' takeover rounds at once: each run is claimed by exactly one of them.
    const [rb, rc] = await Promise.all([takeoverOf(b).round(), takeoverOf(c).round()]);
    expect([...rb.resumed, ...rc.resumed].sort()).toEqual(["q2-queued", "q2-running"]);
    expect([...rb.failed, ...rc.failed]).toEqual([]);
    const handle = (id: string) => b.get(id) ?? c.get(id);
    expect((await handle("q2-running")!.done).status).toBe("success");
    expect((await handle("q2-queued")!.done).status).toBe("success");
    const values = (await runtime.readState("q2"))!.values as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.map((m) => `${m.type}:${String(m.content)}`)).toEqual([
      "human:before the crash",
      "ai:resumed answer",
      "human:queued on the dead process",
      "ai:queued answer",
    ]);
    expect(model.callCount).toBe(2);
    expect(await runtime.stores.runs.get("q2-queued")).toMatchObject({ status: "success", error: null });
    // its stream went on from what the dead process had written (no second metadata event) to its end
    const items = await queuedStream;
    expect(eventNames(items).filter((e) => e === "metadata")).toHaveLength(1);
    expect(eventNames(items).at(-1)).toBe("end");
  });

  it("a started queued run whose process died before its input was checkpointed starts over from its stored input", async () => {
    const { runtime, model, b, leases, lock } = await twoProcesses(["the answer"]);
    await runtime.updateState("q6", { messages: [humanMessage("an earlier turn")] });
    // marked running, its input never committed (the thread's head is not the run's)
    await deadRun(runtime, leases, "q6-started", "q6", "running", { input: { update: { messages: [humanMessage("the lost input")] } } });
    await lock.acquire("q6", "q6-started", "A-dead", 1, 0);
    expect((await (await b.resume("q6-started")).done).status).toBe("success");
    const values = (await runtime.readState("q6"))!.values as { messages: Array<{ type: string; content: unknown }> };
    expect(values.messages.map((m) => `${m.type}:${String(m.content)}`)).toEqual(["human:an earlier turn", "human:the lost input", "ai:the answer"]);
    expect(model.callCount).toBe(1);
  });

  it("a queued run whose request carried secrets is ended with why instead of being started without them", async () => {
    const { runtime, model, b, leases, bridge } = await twoProcesses(["must not run"]);
    await deadRun(runtime, leases, "q3-queued", "q3", "pending", { input: { update: { messages: [humanMessage("x")] } }, secretNames: ["GITHUB_TOKEN"] });
    const tail = collect((l) => bridge.subscribe("q3-queued", null, l));
    expect(await takeoverOf(b).round()).toMatchObject({ resumed: [], failed: ["q3-queued"] });
    const rec = await runtime.stores.runs.get("q3-queued");
    expect(rec).toMatchObject({ status: "error", stopReason: "secrets_not_resumable" });
    expect(rec!.error).toContain("its request carried secrets (GITHUB_TOKEN), which are never stored; send the request again");
    expect(eventNames(await tail)).toEqual(["error", "end"]);
    expect(model.callCount).toBe(0);
  });

  it("a queued run taken over by another process while it waited here (late heartbeats) does not start here as well", async () => {
    const { runtime, model, gate, b, leases } = await twoProcesses([callGate, "first answer", "a second execution"]);
    const first = await b.create(request("q4", "one"));
    await gate.entered;
    const queued = await b.create(request("q4", "two", { strategy: "enqueue" }));
    await expect.poll(async () => (await leases.get(queued.runId))?.owner).toBe("B");
    // Another process claimed the queued run's lease (this one's heartbeats looked dead).
    expect(await leases.acquire(queued.runId, "q4", "C", Date.now() + 60_000, Number.MAX_SAFE_INTEGER)).toBe(true);
    gate.open();
    expect((await first.done).status).toBe("success");
    expect(await queued.done).toMatchObject({ status: "interrupted", error: expect.stringMatching(/executed by another process now/) });
    expect(model.callCount).toBe(2);
    // its record is the new owner's to write
    expect((await runtime.stores.runs.get(queued.runId))?.status).toBe("pending");
  });
});
