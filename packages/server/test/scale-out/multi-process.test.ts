/**
 * Several real `deerflow serve` processes on one config, one data dir, one
 * PostgreSQL database (fresh per file) and one Redis, over one scripted
 * OpenAI-compatible server: runs are started, joined, streamed, cancelled and
 * taken over across processes. Waits are for events (stream frames, output
 * lines, run statuses), never for time.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { FreshDatabase, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { cancelRun, createRun, createThread, getRun, joinRun, runIdOf, streamRun, threadMessages, waitForMessages, waitForRun } from "./helpers/runs-api";
import { scaleOutConfigYaml, startServe } from "./helpers/serve-process";
import type { ServeProcess } from "./helpers/serve-process";
import { requestShape, scriptedRouter } from "./helpers/scripted-router";
import { lastId } from "./helpers/sse-client";
import type { SseFrame } from "./helpers/sse-client";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

/** Stream ids `{epochMs}-{seq}` compare as pairs. */
function idKey(id: string): [number, number] {
  const [ms, seq] = id.split("-").map(Number);
  return [ms!, seq!];
}
function idLess(a: string, b: string): boolean {
  const [am, as] = idKey(a);
  const [bm, bs] = idKey(b);
  return am < bm || (am === bm && as < bs);
}
function assertIncreasing(frames: SseFrame[]): void {
  const ids = frames.map((f) => f.id).filter((x): x is string => !!x);
  for (let i = 1; i < ids.length; i++) expect(idLess(ids[i - 1]!, ids[i]!), `${ids[i - 1]} < ${ids[i]}`).toBe(true);
}
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  return s[lo]! + (s[Math.ceil(rank)]! - s[lo]!) * (rank - lo);
}

describe.skipIf(!PG || !REDIS)("several deerflow serve processes on PostgreSQL + Redis", { timeout: 180_000 }, () => {
  let db: FreshDatabase;
  let llm: ScriptedLLMServer;
  let root: string;
  let dataDir: string;
  let configPath: string;
  let a: ServeProcess;
  let b: ServeProcess;
  const extra: ServeProcess[] = [];

  beforeAll(async () => {
    db = await freshPostgresDatabase(PG!, "scaleout");
    llm = await startScriptedLLMServer({ script: [scriptedRouter().step], onExhausted: "repeat-last" });
    root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-scaleout-"));
    dataDir = path.join(root, "data");
    configPath = path.join(root, "config.yaml");
    // a short lease: a killed process's run is taken over within seconds (heartbeats every second)
    fs.writeFileSync(configPath, scaleOutConfigYaml({ llmUrl: `${llm.url}/v1`, postgresUrl: db.url, redisUrl: REDIS!, leaseSeconds: 3, graceSeconds: 1 }));
    // both start at the same moment on an empty database: the migrations run once, under their lock
    [a, b] = await Promise.all([startServe({ name: "A", configPath, dataDir }), startServe({ name: "B", configPath, dataDir })]);
  }, 120_000);

  /** On a failure, what the processes printed (their takeover and error lines). */
  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    for (const p of [a, b, ...extra]) if (p) console.error(`--- ${p.name} (pid ${p.pid}) output:\n${p.output.slice(-4000)}`);
  });

  afterAll(async () => {
    for (const p of [a, b, ...extra]) await p?.stop();
    await llm?.close();
    await db?.drop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("both processes started on one empty database; no SQLite file is written", () => {
    for (const p of [a, b]) expect(p.output).not.toMatch(/runs are not shared/);
    const files = fs.existsSync(dataDir) ? fs.readdirSync(dataDir, { recursive: true }).map(String) : [];
    expect(files.filter((f) => /\.(db|sqlite)(-wal|-shm)?$/.test(f))).toEqual([]);
  });

  it("a run started on A is joined and streamed from B, to the same end", async () => {
    const tid = await createThread(a.api);
    const onA = await streamRun(a.api, tid, "[stream 40 15] join me");
    const runId = await runIdOf(onA);
    // B follows the run A executes, from its first event
    const onB = await joinRun(b.api, tid, runId);
    const [framesA, framesB] = await Promise.all([onA.done, onB.done]);
    expect(framesA.at(-1)?.event).toBe("end");
    expect(framesB.at(-1)?.event).toBe("end");
    // the same events with the same ids (the Redis entry ids), whichever process served them
    const key = (f: SseFrame) => `${f.id}|${f.event}`;
    expect(framesB.filter((f) => f.id).map(key)).toEqual(framesA.filter((f) => f.id).map(key));
    assertIncreasing(framesB);
    expect((await getRun(b.api, tid, runId)).status).toBe("success");
    const msgs = await threadMessages(b.api, tid);
    expect(msgs.map((m) => m.type)).toEqual(["human", "ai"]);
  });

  it("a Last-Event-ID reconnect to the other process continues the stream exactly after that id", async () => {
    const tid = await createThread(a.api);
    const onA = await streamRun(a.api, tid, "[stream 60 20] reconnect");
    const runId = await runIdOf(onA);
    await onA.waitFor((f) => f.event === "messages", 30_000);
    const seen = [...onA.frames];
    onA.abort();
    const last = lastId(seen)!;
    const onB = await joinRun(b.api, tid, runId, last);
    const rest = await onB.done;
    expect(rest.at(-1)?.event).toBe("end");
    for (const f of rest) if (f.id) expect(idLess(last, f.id), `${f.id} after ${last}`).toBe(true);
    // nothing lost, nothing twice: the two halves are the whole stream as B replays it from the start
    const whole = await (await joinRun(b.api, tid, runId)).done;
    const ids = (fs: SseFrame[]) => fs.filter((f) => f.id).map((f) => f.id);
    expect([...ids(seen), ...ids(rest)]).toEqual(ids(whole));
  });

  it("cancel from B reaches the run executing on A (p99 < 500 ms over 20 cancels)", async () => {
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const tid = await createThread(a.api);
      const onA = await streamRun(a.api, tid, `[hang] cancel ${i}`);
      const runId = await runIdOf(onA);
      // the run is in its model call on A (the scripted server got the request)
      await waitForRun(b.api, tid, runId, (s) => s === "running");
      const t0 = performance.now();
      expect(await cancelRun(b.api, tid, runId, "interrupt")).toBe(202);
      const end = await onA.waitFor((f) => f.event === "end", 10_000);
      latencies.push(end.at - t0);
      expect(await waitForRun(b.api, tid, runId, (s) => s !== "running")).toBe("interrupted");
    }
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    console.log(`[scale-out] cancel from another process: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${latencies.length}`);
    expect(p99).toBeLessThan(500);
  });

  it("a run created on B for a thread busy on A is enqueued and starts after A's run ended", async () => {
    const tid = await createThread(a.api);
    const onA = await streamRun(a.api, tid, "[slow 1500] first");
    const run1 = await runIdOf(onA);
    await waitForRun(a.api, tid, run1, (s) => s === "running");
    const run2 = await createRun(b.api, tid, "second", { multitask_strategy: "enqueue" });
    expect(run2.status).toBe("pending");
    const onB = await joinRun(b.api, tid, run2.run_id);
    await onA.done;
    expect((await getRun(b.api, tid, run1)).status).toBe("success");
    const framesB = await onB.done;
    expect(framesB.at(-1)?.event).toBe("end");
    expect(await waitForRun(b.api, tid, run2.run_id, (s) => s !== "pending" && s !== "running")).toBe("success");
    // run 2's model call saw run 1's answer: it started after run 1 ended
    const second = llm.requests.find((r) => requestShape(r).human.includes("second"));
    const prior = ((second?.body?.messages ?? []) as Array<{ role: string; content: unknown }>).filter((m) => m.role === "assistant");
    expect(JSON.stringify(prior)).toContain("[slow 1500] first");
    expect((await threadMessages(a.api, tid)).map((m) => m.type)).toEqual(["human", "ai", "human", "ai"]);
  });

  it("kill -9 of A mid-run: B takes the run over, the stream continues on reconnect to B, the run ends success, no committed step lost", async () => {
    // a third process takes A's place, so the later tests still have two
    const victim = await startServe({ name: "A2", configPath, dataDir });
    extra.push(victim);
    const tid = await createThread(victim.api);
    const onA = await streamRun(victim.api, tid, "[crash k9] survive this");
    const runId = await runIdOf(onA);
    // the tool step committed on A (tool call + its result), then A hangs in its second model call
    await onA.waitFor((f) => f.event === "values" && JSON.stringify(f.data).includes('"type":"tool"'), 30_000);
    // the stream shows the step before its checkpoint commits (ordered writes, not awaited): wait for the store
    const before = await waitForMessages(b.api, tid, (ms) => ms.length >= 3);
    expect(before.map((m) => m.type)).toEqual(["human", "ai", "tool"]);
    // a run queued on B behind it: it must wait for the resumed run, not take the dead owner's expired slot
    const queued = await createRun(b.api, tid, "after the crash", { multitask_strategy: "enqueue" });
    expect(queued.status).toBe("pending");
    const last = lastId(onA.frames)!;
    await victim.kill9();
    await onA.done;
    expect(onA.frames.at(-1)?.event).not.toBe("end");
    // the client reconnects to B with the last id it saw: B (or A, whichever claims it first) resumes the run
    const onB = await joinRun(b.api, tid, runId, last);
    await onB.waitFor((f) => f.event === "end", 60_000);
    const rest = await onB.done;
    expect(rest.map((f) => f.event)).not.toContain("error");
    expect(rest.at(-1)?.event).toBe("end");
    for (const f of rest) if (f.id) expect(idLess(last, f.id)).toBe(true);
    expect((await getRun(b.api, tid, runId)).status).toBe("success");
    // (the queued run may already have started: the resumed run's part is the first four messages)
    const after = (await threadMessages(b.api, tid)).slice(0, 4);
    expect(after.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(after[2]).toEqual(before[2]); // the committed tool result is the same message
    expect(after[3]!.content).toBe("resumed k9");
    expect(a.output + b.output).toMatch(new RegExp(`taking over run ${runId}`));
    // then the queued run, on the resumed run's answer
    expect(await waitForRun(b.api, tid, queued.run_id, (s) => s !== "pending" && s !== "running")).toBe("success");
    const final = await threadMessages(b.api, tid);
    expect(final.map((m) => `${m.type}:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`).slice(3)).toEqual([
      "ai:resumed k9",
      expect.stringMatching(/^human:[\s\S]*after the crash/),
      expect.stringMatching(/^ai:answer: [\s\S]*after the crash/),
    ]);
    const req = llm.requests.find((r) => requestShape(r).human.includes("after the crash"));
    expect(JSON.stringify(req?.body?.messages)).toContain("resumed k9");
  });

  it("serve --workers 2 on the same backends: both workers serve; a killed worker is replaced", async () => {
    const w = await startServe({ name: "workers", configPath, dataDir, args: ["--workers", "2"] });
    extra.push(w);
    const m = await w.waitFor(/2 workers \(pids (\d+), (\d+)\) share the port/);
    const pids = [Number(m[1]), Number(m[2])];
    const tid = await createThread(w.api);
    const s1 = await streamRun(w.api, tid, "hello workers");
    expect((await s1.done).at(-1)?.event).toBe("end");
    process.kill(pids[0]!, "SIGKILL");
    await w.waitFor(new RegExp(`worker ${pids[0]} exited \\(signal SIGKILL\\)`));
    await w.waitFor(/listening \(replacement\)/);
    const s2 = await streamRun(w.api, tid, "again");
    expect((await s2.done).at(-1)?.event).toBe("end");
    expect((await threadMessages(b.api, tid)).map((x) => x.type)).toEqual(["human", "ai", "human", "ai"]);
  });
});

describe("serve --workers on SQLite", { timeout: 60_000 }, () => {
  it("is refused, naming database.backend and stream_bridge.type", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-scaleout-sqlite-"));
    try {
      const configPath = path.join(root, "config.yaml");
      fs.writeFileSync(configPath, scaleOutConfigYaml({ llmUrl: "http://127.0.0.1:9/v1" }));
      const p = await startServe({ name: "refused", configPath, dataDir: path.join(root, "data"), args: ["--workers", "2"], noWait: true });
      const exit = await p.waitExit();
      expect(exit.code).toBe(2);
      expect(p.output).toContain("database.backend is 'sqlite'");
      expect(p.output).toContain("stream_bridge.type is 'memory'");
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
