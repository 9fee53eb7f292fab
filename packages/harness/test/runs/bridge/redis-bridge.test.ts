import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRedisRunTransport } from "../../../src/runs/bridge";
import type { RunSignal } from "../../../src/runs/backend-types";
import { ConfigError, StreamBridgeError } from "../../../src/errors";
import { freePort } from "../../../src/testing";
import { collect, describeStreamBridgeContract, uniqueRunId } from "./bridge-contract";

const url = process.env.DEERFLOW_TEST_REDIS_URL;
/** Keys and channels of this file only: the test Redis is shared with other test files. */
const prefix = `deerflow-test:${process.pid}:${Date.now().toString(36)}`;

async function openPair(tag: string, queueMaxsize = 8, ttlSeconds = 60) {
  const options = {
    url: url!,
    queueMaxsize,
    ttlSeconds,
    log: () => {},
    keyPrefix: `${prefix}:${tag}:stream_bridge`,
    signalsChannel: `${prefix}:${tag}:run_signals`,
  };
  const a = await openRedisRunTransport(options);
  const b = await openRedisRunTransport(options);
  return { a, b, options };
}

describe.skipIf(!url)("Redis stream bridge", () => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url!, { lazyConnect: false });
  });
  afterAll(async () => {
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  });

  describeStreamBridgeContract("redis (two processes on one Redis)", async () => {
    const { a, b } = await openPair("contract");
    return {
      bridge: a.bridge,
      peer: b.bridge,
      queueMaxsize: 8,
      ttlSeconds: 60,
      async remainingTtlMs(runId) {
        const ms = await admin.pttl(a.bridge.keyOf(runId));
        return ms >= 0 ? ms : undefined;
      },
      async age(runId, ms) {
        const key = a.bridge.keyOf(runId);
        const left = await admin.pttl(key);
        await admin.pexpire(key, Math.max(0, Math.floor(left - ms)));
      },
      async close() {
        await a.close();
        await b.close();
      },
    };
  });

  describe("on Redis", () => {
    let pair: Awaited<ReturnType<typeof openPair>>;
    beforeAll(async () => {
      pair = await openPair("details", 4, 3600);
    });
    afterAll(async () => {
      await pair.a.close();
      await pair.b.close();
    });

    it("stores one capped stream per run under the DeerFlow key shape, with the writer's ids and an end marker", async () => {
      const runId = uniqueRunId("shape");
      const key = pair.a.bridge.keyOf(runId);
      expect(key).toBe(`${prefix}:details:stream_bridge:${runId}`);
      const w = await pair.a.bridge.writer(runId);
      const ids = Array.from({ length: 6 }, (_, n) => w.publish("values", { n }));
      await w.end();
      const entries = (await admin.xrange(key, "-", "+")) as [string, string[]][];
      // queue_maxsize events plus the end marker
      expect(entries.map((e) => e[0])).toEqual([...ids.slice(2), expect.stringMatching(/^\d+-6$/)]);
      expect(entries[0][1]).toEqual(["kind", "event", "event", "values", "data", '{"n":2}']);
      expect(entries.at(-1)![1]).toEqual(["kind", "end"]);
      const ttl = await admin.ttl(key);
      expect(ttl).toBeGreaterThan(3590);
      expect(ttl).toBeLessThanOrEqual(3600);
    });

    it("shares one blocking reader across runs and subscribers of another process", async () => {
      const runs = [uniqueRunId("shared"), uniqueRunId("shared"), uniqueRunId("shared")];
      const subs = runs.flatMap((r) => [collect(pair.b.bridge, r, null), collect(pair.b.bridge, r, null)]);
      const writers = await Promise.all(runs.map((r) => pair.a.bridge.writer(r)));
      writers.forEach((w, i) => w.publish("values", { n: i }));
      await Promise.all(subs.map((s) => s.eventCount(1)));
      await Promise.all(writers.map((w) => w.end()));
      const done = await Promise.all(subs.map((s) => s.done));
      expect(done.map((items) => items.map((x) => x.kind))).toEqual(subs.map(() => ["event", "end"]));
    });

    it("wakes the blocked shared reader when a run joins (it would otherwise wait out a minute-long block)", async () => {
      const slow = await openRedisRunTransport({ ...pair.options, readerBlockMs: 60_000 });
      try {
        const quiet = uniqueRunId("quiet");
        const blocked = collect(slow.bridge, quiet, null);
        const qw = await pair.a.bridge.writer(quiet);
        qw.publish("values", { n: 0 });
        await blocked.eventCount(1); // the reader now blocks on this run alone
        const joined = uniqueRunId("joined");
        const w = await pair.a.bridge.writer(joined);
        w.publish("values", { n: 1 });
        await w.flush();
        const late = collect(slow.bridge, joined, null);
        await late.eventCount(1); // replayed
        w.publish("values", { n: 2 });
        await late.eventCount(2); // live: only if the joining run woke the blocked read
        await w.end();
        await qw.end();
        expect((await late.done).map((x) => x.kind)).toEqual(["event", "event", "end"]);
        await blocked.done;
      } finally {
        await slow.close();
      }
    });

    it("a stale writer (the run was taken over) fails its flush instead of interleaving ids", async () => {
      const runId = uniqueRunId("stale");
      const old = await pair.a.bridge.writer(runId);
      old.publish("values", { n: 0 });
      await old.flush();
      const taker = await pair.b.bridge.writer(runId, { resume: true });
      taker.publish("values", { n: 1 });
      await taker.flush();
      old.publish("values", { n: 99 });
      await expect(old.flush()).rejects.toMatchObject({ name: "StreamBridgeError", code: "stream_bridge_stale_writer" });
      await taker.end();
      const c = collect(pair.b.bridge, runId, null);
      expect((await c.done).map((x) => (x.kind === "event" ? (x.data as { n: number }).n : x.kind))).toEqual([0, 1, "end"]);
    });

    it("lease epochs: a stale append between the new owner's open and its first append is refused, the new owner's goes in", async () => {
      const runId = uniqueRunId("epoch-race");
      const key = pair.a.bridge.keyOf(runId);
      const old = await pair.a.bridge.writer(runId, { epoch: () => 1 });
      const onOld = collect(pair.a.bridge, runId, null);
      const first = old.publish("values", { n: 0 });
      await old.flush();
      expect(await admin.get(`${key}:writer_epoch`)).toBe("1");
      // the takeover claimed epoch 2 and opens its writer: from here on the stream is its
      const taker = await pair.b.bridge.writer(runId, { resume: true, epoch: () => 2 });
      expect(await admin.get(`${key}:writer_epoch`)).toBe("2");
      // the stale owner appends before the new owner's first append: refused (the stream's top is still its own)
      const refused = old.publish("values", { n: 99 });
      await expect(old.flush()).rejects.toMatchObject({ name: "StreamBridgeError", code: "stream_bridge_stale_writer", message: expect.stringMatching(/lease epoch 2, this writer holds epoch 1/) });
      // its local subscriber (shown the event at once: the writer was not in doubt yet) is let go at the last id Redis
      // took from it, so resuming from the error's id it gets the new owner's events from there
      const local = await onOld.done;
      expect(local.map((x) => (x.kind === "event" ? `${x.event}:${x.id}` : x.kind))).toEqual([`values:${first}`, `values:${refused}`, `error:${first}`, "end"]);
      // the new owner's append goes in after the old owner's last stored entry
      const next = taker.publish("values", { n: 1 });
      await taker.flush();
      await taker.end();
      const entries = (await admin.xrange(key, "-", "+")) as [string, string[]][];
      expect(entries.map((e) => e[0]).slice(0, 2)).toEqual([first, next]);
      const c = collect(pair.b.bridge, runId, null);
      expect((await c.done).map((x) => (x.kind === "event" ? (x.data as { n: number }).n : x.kind))).toEqual([0, 1, "end"]);
      // the epoch key expires with the stream
      expect(await admin.ttl(`${key}:writer_epoch`)).toBeGreaterThan(3000);
      // a writer whose epoch is below the stream's cannot even open a resumed writer
      await expect(pair.a.bridge.writer(runId, { resume: true, epoch: () => 1 })).rejects.toMatchObject({ code: "stream_bridge_stale_writer" });
    });

    it("abandon: a writer that lost its run stores nothing more and ends its local subscribers with an error at the last stored id", async () => {
      const runId = uniqueRunId("abandon");
      const key = pair.a.bridge.keyOf(runId);
      const w = await pair.a.bridge.writer(runId, { epoch: () => 3 });
      const stored = w.publish("values", { n: 0 });
      await w.flush();
      const onA = collect(pair.a.bridge, runId, null);
      // published but not yet sent (the batch goes out at the end of this turn): abandoned before it is
      w.publish("values", { n: 1 });
      w.abandon!("taken over");
      const items = await onA.done;
      expect(items.at(-2)).toMatchObject({ kind: "event", event: "error", id: stored, data: { message: "taken over", name: "StreamBridgeError" } });
      expect(items.at(-1)).toEqual({ kind: "end" });
      await expect(w.flush()).rejects.toMatchObject({ code: "stream_bridge_stale_writer" });
      w.publish("values", { n: 2 });
      // a write on the same connection after the next batch turn: anything the abandoned writer sent is in by then
      await new Promise((r) => setImmediate(r));
      const probe = await pair.a.bridge.writer(uniqueRunId("abandon-probe"));
      probe.publish("values", { n: 0 });
      await probe.end();
      expect(((await admin.xrange(key, "-", "+")) as [string, string[]][]).map((e) => e[0])).toEqual([stored]);
      // a later subscriber reads Redis: the one stored event (the end is the new owner's to write)
      const fresh = collect(pair.b.bridge, runId, null);
      await fresh.eventCount(1);
      expect(fresh.events().map((e) => e.id)).toEqual([stored]);
      fresh.stop();
    });

    it("carries run signals across processes, once each, with the sender's listeners called at once", async () => {
      const gotA: RunSignal[] = [];
      const gotB: RunSignal[] = [];
      let wakeA!: () => void;
      const aHasTwo = new Promise<void>((r) => (wakeA = r));
      let wakeB!: () => void;
      const bHasOne = new Promise<void>((r) => (wakeB = r));
      const stopA = pair.a.signals.subscribe((s) => {
        gotA.push(s);
        if (gotA.length === 2) wakeA();
      });
      const stopB = pair.b.signals.subscribe((s) => {
        gotB.push(s);
        if (gotB.length === 1) wakeB();
      });
      const cancel: RunSignal = { type: "cancel", runId: "r-sig", action: "rollback" };
      const pending = pair.a.signals.publish(cancel);
      expect(gotA).toEqual([cancel]);
      await pending;
      await bHasOne;
      expect(gotB).toEqual([cancel]);
      const released: RunSignal = { type: "thread_released", threadId: "t-sig" };
      await pair.b.signals.publish(released);
      await aHasTwo;
      // A's own cancel came back on the channel before B's message: it was skipped, not delivered twice.
      expect(gotA).toEqual([cancel, released]);
      await admin.publish(`${prefix}:details:run_signals`, JSON.stringify({ origin: "x", signal: { type: "bogus" } }));
      stopA();
      stopB();
    });

    it("reports publish cost and cross-process latency", async () => {
      const { createMemoryStreamBridge } = await import("../../../src/runs/bridge");
      // CPU time, not wall time: the test machine is shared, CPU per event is what a process pays.
      const n = 20_000;
      const payload = { type: "ai", content: "hello world, a token or two", id: "msg-1" };
      const cpuUs = (from: NodeJS.CpuUsage) => {
        const c = process.cpuUsage(from);
        return (c.user + c.system) / n;
      };
      const memory = createMemoryStreamBridge({ queueMaxsize: 256, ttlSeconds: 60 });
      const mw = await memory.writer("bench-memory");
      let c0 = process.cpuUsage();
      for (let i = 0; i < n; i++) mw.publish("messages", payload);
      const memoryUs = cpuUs(c0);

      const rw = await pair.a.bridge.writer(uniqueRunId("bench"));
      c0 = process.cpuUsage();
      for (let i = 0; i < n; i++) rw.publish("messages", payload);
      await rw.flush();
      const redisUs = cpuUs(c0);
      await rw.end();

      const runId = uniqueRunId("latency");
      const w = await pair.a.bridge.writer(runId);
      const samples: number[] = [];
      let sentAt = 0;
      let next!: () => void;
      const stop = pair.b.bridge.subscribe(runId, null, (item) => {
        if (item.kind === "event") {
          samples.push(performance.now() - sentAt);
          next();
        }
      });
      for (let i = 0; i < 300; i++) {
        const arrived = new Promise<void>((r) => (next = r));
        sentAt = performance.now();
        w.publish("values", { i });
        await arrived;
      }
      stop();
      await w.end();
      samples.sort((x, y) => x - y);
      const p50 = samples[Math.floor(samples.length * 0.5)];
      const p99 = samples[Math.floor(samples.length * 0.99)];

      // A cancel published on A reaching B's listener.
      const signalSamples: number[] = [];
      let signalSent = 0;
      let signalArrived!: () => void;
      const stopSignals = pair.b.signals.subscribe(() => {
        signalSamples.push(performance.now() - signalSent);
        signalArrived();
      });
      for (let i = 0; i < 200; i++) {
        const arrived = new Promise<void>((r) => (signalArrived = r));
        signalSent = performance.now();
        await pair.a.signals.publish({ type: "cancel", runId: `bench-${i}`, action: "interrupt" });
        await arrived;
      }
      stopSignals();
      signalSamples.sort((x, y) => x - y);
      const s50 = signalSamples[Math.floor(signalSamples.length * 0.5)];
      const s99 = signalSamples[Math.floor(signalSamples.length * 0.99)];
      console.log(
        `[bridge] CPU per published event: memory ${memoryUs.toFixed(2)} µs, redis ${redisUs.toFixed(2)} µs (until stored); ` +
          `A→B event latency p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms; A→B signal p50 ${s50.toFixed(2)} ms, p99 ${s99.toFixed(2)} ms`,
      );
      expect(samples).toHaveLength(300);
      expect(signalSamples).toHaveLength(200);
      expect(p99).toBeLessThan(500);
      expect(s99).toBeLessThan(500);
    });
  });

  it("refuses a malformed URL naming the key, and an unreachable Redis with a masked URL", async () => {
    await expect(openRedisRunTransport({ url: "http://x", queueMaxsize: 8, ttlSeconds: 1, log: () => {} })).rejects.toBeInstanceOf(ConfigError);
    const port = await freePort();
    const err = await openRedisRunTransport({ url: `redis://user:s3cretpw@127.0.0.1:${port}`, queueMaxsize: 8, ttlSeconds: 1, log: () => {} }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamBridgeError);
    expect((err as StreamBridgeError).code).toBe("stream_bridge_unavailable");
    expect((err as Error).message).toContain("stream_bridge.redis_url");
    expect((err as Error).message).not.toContain("s3cretpw");
  });
});

