/**
 * Red team of the Redis stream bridge and run signals: what a client (or a
 * prompt-injected agent driving one) controls — run ids, `Last-Event-ID`
 * values, event names and payloads — reaches Redis as keys, stream ids, Lua
 * arguments and pub/sub messages. Two transports on one real Redis stand for
 * two server processes; each attack is tried on the process that does not
 * write the run (the reader path) and, where it differs, on the writer's.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRedisRunTransport } from "../../../src/runs/bridge";
import type { RedisRunTransport } from "../../../src/runs/bridge/redis-transport";
import type { RunSignal, StreamItem } from "../../../src/runs/backend-types";
import { collect, uniqueRunId } from "../bridge/bridge-contract";

const url = process.env.DEERFLOW_TEST_REDIS_URL;
const prefix = `deerflow-redteam:${process.pid}:${Date.now().toString(36)}`;

/** Resolves with the subscription's items once it ends (end or gap); rejects after `ms` (a hang is the failure). */
function ended(c: ReturnType<typeof collect>, ms = 5000): Promise<StreamItem[]> {
  return Promise.race([
    c.done,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`subscription did not end within ${ms} ms; got ${c.items.map((i) => i.kind).join(",")}`)), ms)),
  ]);
}

function nOf(items: StreamItem[]): unknown[] {
  return items.map((i) => (i.kind === "event" ? (i.data as { n?: number }).n : i.kind));
}

describe.skipIf(!url)("red team: client input on the Redis bridge and signals", () => {
  let admin: Redis;
  let a: RedisRunTransport;
  let b: RedisRunTransport;
  const options = {
    url: url!,
    queueMaxsize: 8,
    ttlSeconds: 600,
    log: () => {},
    keyPrefix: `${prefix}:stream_bridge`,
    signalsChannel: `${prefix}:run_signals`,
  };

  beforeAll(async () => {
    admin = new Redis(url!);
    a = await openRedisRunTransport(options);
    b = await openRedisRunTransport(options);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  });

  /** A finished run of 5 events written by A; its ids. */
  async function finishedRun(tag: string): Promise<{ runId: string; ids: string[] }> {
    const runId = uniqueRunId(tag);
    const w = await a.bridge.writer(runId);
    const ids = Array.from({ length: 5 }, (_, n) => w.publish("values", { n }));
    await w.end();
    return { runId, ids };
  }

  const hostileIds = [
    "*",
    "$",
    "+",
    "-",
    ">",
    "0",
    "0-*",
    "1-1\r\nFLUSHALL",
    "x".repeat(100_000),
    "99999999999999999999-0",
    "-1--1",
    " 1-1 ",
  ];

  it.each(hostileIds.map((id) => [JSON.stringify(id.length > 40 ? `${id.slice(0, 20)}…(${id.length})` : id), id]))(
    "Last-Event-ID %s replays the whole retained stream once and ends, on the reader and on the writer",
    async (_label, id) => {
      const { runId } = await finishedRun("hostile");
      for (const bridge of [b.bridge, a.bridge]) {
        const items = await ended(collect(bridge, runId, id));
        // an id that is not `{ms}-{seq}` counts as absent: everything retained, then end
        expect(nOf(items)).toEqual([0, 1, 2, 3, 4, "end"]);
      }
      // nothing but the run's own stream was touched (no FLUSHALL, no stray key)
      expect(await admin.exists(a.bridge.keyOf(runId))).toBe(1);
      expect(await admin.keys(`${prefix}:stream_bridge:*[*$+\r\n]*`)).toEqual([]);
    },
  );

  it("Last-Event-ID 0-0 resumes after the first id; an id of the run itself resumes exactly after it", async () => {
    const { runId, ids } = await finishedRun("zero");
    expect(nOf(await ended(collect(b.bridge, runId, ids[2]!)))).toEqual([3, 4, "end"]);
    // `0-0` is older than every id of the run: the whole stream, once, on either process
    expect(nOf(await ended(collect(b.bridge, runId, "0-0")))).toEqual([0, 1, 2, 3, 4, "end"]);
    expect(nOf(await ended(collect(a.bridge, runId, "0-0")))).toEqual([0, 1, 2, 3, 4, "end"]);
  });

  it.each([
    ["far-future id", "999999999999999-999999999999999"],
    ["far-future time, small seq", "999999999999999-0"],
    ["far-future seq, small time", "1-999999999999999"],
  ])("a %s on a finished run ends the subscription instead of holding it open forever (reader and writer)", async (_what, id) => {
    const { runId } = await finishedRun("future");
    for (const bridge of [b.bridge, a.bridge]) {
      const items = await ended(collect(bridge, runId, id));
      expect(items.at(-1)?.kind).toBe("end");
      // whatever it replays, nothing twice and in order
      const ns = nOf(items).filter((x) => typeof x === "number") as number[];
      expect(ns).toEqual([...ns].sort((x, y) => x - y));
      expect(new Set(ns).size).toBe(ns.length);
    }
  });

  it("a far-future Last-Event-ID on a live run read by another process still gets the run's later events and its end", async () => {
    const runId = uniqueRunId("future-live");
    const w = await a.bridge.writer(runId);
    w.publish("values", { n: 0 });
    await w.flush();
    const reader = collect(b.bridge, runId, "999999999999999-999999999999999");
    // the replay is in once B's XRANGE answered; then A goes on writing
    await admin.xrange(a.bridge.keyOf(runId), "-", "+");
    w.publish("values", { n: 1 });
    w.publish("values", { n: 2 });
    await w.end();
    const items = await ended(reader);
    expect(items.at(-1)?.kind).toBe("end");
  });

  it("a run id shaped like a pattern or a Redis id is a key of its own: it reads nothing of other runs", async () => {
    const victim = uniqueRunId("victim");
    const w = await a.bridge.writer(victim);
    w.publish("values", { n: 0 });
    await w.flush();
    const probes = ["*", `${victim.slice(0, 10)}*`, "?", "[a-z]*", "0-0", "$", `${victim}\r\n`, "..", ""].map((p) => collect(b.bridge, p, null));
    // the victim goes on and ends while every probe is tailed by B's one shared reader
    const own = collect(b.bridge, victim, null);
    await own.eventCount(1);
    w.publish("values", { n: 1 });
    await w.end();
    expect(nOf(await ended(own))).toEqual([0, 1, "end"]);
    for (const p of probes) {
      expect(p.items).toEqual([]);
      p.stop();
    }
    for (const probe of ["*", "?", "$", ""]) expect(await b.bridge.has(probe)).toBe(false);
    expect(await admin.exists(b.bridge.keyOf(victim))).toBe(1);
  });

  it("event names and payloads an agent controls travel as data: an event named `end` or a payload with Lua/RESP text does not end or corrupt the stream", async () => {
    const runId = uniqueRunId("payload");
    const w = await a.bridge.writer(runId);
    const hostile = ["end", "kind", "', redis.call('FLUSHALL'), '", "\r\n*1\r\n$8\r\nFLUSHALL\r\n", "x".repeat(300_000)];
    for (const [n, text] of hostile.entries()) w.publish(text.length > 100 ? "custom" : text, { n, text });
    w.publish("values", { n: hostile.length });
    await w.end();
    const items = await ended(collect(b.bridge, runId, null));
    expect(nOf(items)).toEqual([0, 1, 2, 3, 4, 5, "end"]);
    // queue_maxsize 8 keeps all six events: each arrived whole with its own name
    const events = items.filter((i): i is Extract<StreamItem, { kind: "event" }> => i.kind === "event");
    expect(events.map((e) => e.event)).toEqual(["end", "kind", hostile[2], hostile[3], "custom", "values"]);
    expect(events.map((e) => (e.data as { text?: string }).text?.length)).toEqual([...hostile.map((h) => h.length), undefined]);
    expect((events[4]!.data as { text: string }).text.length).toBe(300_000);
    expect(items.at(-1)?.kind).toBe("end");
    expect(await admin.dbsize()).toBeGreaterThan(0);
  });

  it("a forged or malformed message on the signals channel reaches no run; a well-formed cancel names exactly one run", async () => {
    const seen: RunSignal[] = [];
    let bArrived!: () => void;
    const atB = new Promise<void>((resolve) => (bArrived = resolve));
    const stop = b.signals.subscribe((s) => {
      seen.push(s);
      if (s.type === "cancel" && s.runId.includes("marker")) bArrived();
    });
    const logs: string[] = [];
    const c = await openRedisRunTransport({ ...options, log: (m) => logs.push(m) });
    const cSeen: RunSignal[] = [];
    let markerArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (markerArrived = resolve));
    c.signals.subscribe((s) => {
      cSeen.push(s);
      if (s.type === "cancel" && s.runId.includes("marker")) markerArrived();
    });
    try {
      const channel = options.signalsChannel;
      for (const junk of [
        "not json",
        JSON.stringify({ signal: { type: "cancel", runId: "*", action: "interrupt" } }), // no origin
        JSON.stringify({ origin: "x", signal: { type: "cancel", runId: "", action: "interrupt" } }),
        JSON.stringify({ origin: "x", signal: { type: "cancel", runId: "r", action: "rm -rf" } }),
        JSON.stringify({ origin: "x", signal: { type: "shutdown" } }),
        JSON.stringify({ origin: "x", signal: { type: "thread_released" } }),
        "x".repeat(1_000_000),
      ]) {
        await admin.publish(channel, junk);
      }
      const marker = uniqueRunId("marker");
      await a.signals.publish({ type: "cancel", runId: marker, action: "interrupt" });
      // the marker arrives after every message sent before it (one channel, in order)
      await Promise.all([arrived, atB]);
      expect(cSeen).toEqual([{ type: "cancel", runId: marker, action: "interrupt" }]);
      expect(seen).toEqual([{ type: "cancel", runId: marker, action: "interrupt" }]);
      expect(logs.filter((l) => /not a run signal/.test(l)).length).toBe(7);
    } finally {
      stop();
      await c.close();
    }
  });
});

describe.skipIf(!url)("red team: a replaced owner's late events (Redis)", () => {
  let admin: Redis;
  let now = 1_000_000;
  const clock = () => now;
  const opts = {
    url: url!,
    queueMaxsize: 16,
    ttlSeconds: 600,
    log: () => {},
    keyPrefix: `${prefix}:stale:stream_bridge`,
    signalsChannel: `${prefix}:stale:run_signals`,
    clock,
  };
  let owner: RedisRunTransport;
  let rescuer: RedisRunTransport;
  beforeAll(async () => {
    admin = new Redis(url!);
    owner = await openRedisRunTransport(opts);
    rescuer = await openRedisRunTransport(opts);
  });
  afterAll(async () => {
    await owner?.close();
    await rescuer?.close();
    const keys = await admin.keys(`${prefix}:stale:*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  });

  it("an owner that wakes after a takeover shows its subscribers none of its late events: they get an error at the last stored id, and resume from there on the new owner's stream", async () => {
    const runId = uniqueRunId("frozen");
    const w = await owner.bridge.writer(runId);
    const local = collect(owner.bridge, runId, null);
    const stored = [w.publish("values", { n: 0 }), w.publish("values", { n: 1 })];
    await w.flush();
    // the owner freezes (its clock jumps past lease + grace); meanwhile another process resumes the run
    const r = await rescuer.bridge.writer(runId, { resume: true });
    r.publish("values", { n: 2, by: "rescuer" });
    await r.flush();
    now += 5000;
    // the owner wakes with a late step of its own
    w.publish("values", { n: 2, by: "stale owner" });
    w.publish("values", { n: 3, by: "stale owner" });
    await expect(w.flush()).rejects.toThrow(/written by another process/);
    const items = await ended(local);
    expect(JSON.stringify(items)).not.toContain("stale owner");
    const error = items.find((i) => i.kind === "event" && i.event === "error") as Extract<StreamItem, { kind: "event" }>;
    expect(error.id).toBe(stored[1]);
    // reconnecting with that id, the client gets the new owner's events, none of the stale ones
    r.publish("values", { n: 3, by: "rescuer" });
    await r.end();
    const rest = await ended(collect(owner.bridge, runId, error.id));
    expect(rest.map((i) => (i.kind === "event" ? (i.data as { by?: string }).by : i.kind))).toEqual(["rescuer", "rescuer", "end"]);
  });

  it("a busy owner (appends confirmed within the window) still delivers synchronously; after a quiet spell the first event waits for Redis, then delivery is synchronous again", async () => {
    const runId = uniqueRunId("quiet");
    const w = await owner.bridge.writer(runId);
    const local = collect(owner.bridge, runId, null);
    w.publish("values", { n: 0 });
    expect(nOf(local.items)).toEqual([0]);
    await w.flush();
    now += 5000; // a long tool call: nothing published for a while
    w.publish("values", { n: 1 });
    expect(nOf(local.items)).toEqual([0]);
    await w.flush();
    expect(nOf(local.items)).toEqual([0, 1]);
    w.publish("values", { n: 2 });
    expect(nOf(local.items)).toEqual([0, 1, 2]);
    now += 5000;
    w.publish("values", { n: 3 });
    await w.end();
    expect(nOf(await ended(local))).toEqual([0, 1, 2, 3, "end"]);
  });
});
