import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StreamBridge, StreamItem } from "../../../src/runs/backend-types";
import { parseEventId } from "../../../src/runs/bridge";

/** One backend under the contract: two handles on it (two processes) and its TTL clock. */
export interface BridgeUnderTest {
  /** Process A's bridge (the writer in most tests). */
  bridge: StreamBridge;
  /** Process B's bridge on the same backend; the memory bridge passes itself. */
  peer: StreamBridge;
  /** The `queue_maxsize` both were opened with (small, e.g. 8). */
  queueMaxsize: number;
  /** The `stream_ttl_seconds` both were opened with. */
  ttlSeconds: number;
  /** Milliseconds left of the run's stream TTL as the backend stores it (`undefined`: no stream). */
  remainingTtlMs(runId: string): Promise<number | undefined>;
  /** Let `ms` of the run's TTL pass: advance the injected clock, or shorten the Redis key's PTTL. */
  age(runId: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** A subscription's items, with promises for "n events arrived" and "it stopped (end or gap)". */
export interface Collected {
  items: StreamItem[];
  events(): Extract<StreamItem, { kind: "event" }>[];
  /** Resolves with all items once `end` or `gap` arrived. */
  done: Promise<StreamItem[]>;
  /** Resolves once at least `n` event items arrived. */
  eventCount(n: number): Promise<void>;
  stop: () => void;
}

/** Subscribe and record every item. */
export function collect(bridge: StreamBridge, runId: string, lastEventId: string | null): Collected {
  const items: StreamItem[] = [];
  let finish!: (items: StreamItem[]) => void;
  const done = new Promise<StreamItem[]>((resolve) => (finish = resolve));
  const waiters: { n: number; resolve: () => void }[] = [];
  let count = 0;
  const stop = bridge.subscribe(runId, lastEventId, (item) => {
    items.push(item);
    if (item.kind === "event") {
      count++;
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (count >= waiters[i].n) waiters.splice(i, 1)[0].resolve();
      }
    } else finish(items);
  });
  return {
    items,
    events: () => items.filter((x): x is Extract<StreamItem, { kind: "event" }> => x.kind === "event"),
    done,
    eventCount: (n) => (count >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    stop,
  };
}

let counter = 0;
/** A run id no other test (or test file on the shared Redis) uses. */
export function uniqueRunId(tag: string): string {
  return `bridge-${tag}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

function payloads(items: StreamItem[]): unknown[] {
  return items.map((x) => (x.kind === "event" ? (x.data as { n: number }).n : x.kind));
}

/** Wait (bounded) until `has(runId)` answers `want`: expiry is the backend's own event. */
async function hasBecomes(bridge: StreamBridge, runId: string, want: boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await bridge.has(runId)) === want) return;
    await new Promise((r) => setImmediate(r));
  }
  expect(await bridge.has(runId)).toBe(want);
}

/**
 * The behaviour every {@link StreamBridge} shares: ids, replay from any id,
 * one gap for an id older than the window, the cap, the TTL, end, several
 * subscribers, a resumed writer, and a second process on the same backend.
 */
export function describeStreamBridgeContract(name: string, factory: () => Promise<BridgeUnderTest>): void {
  describe(`StreamBridge contract: ${name}`, () => {
    let t: BridgeUnderTest;
    beforeAll(async () => {
      t = await factory();
    });
    afterAll(async () => {
      await t?.close();
    });

    it("hands out strictly increasing {epochMs}-{seq} ids and replays everything then end", async () => {
      const runId = uniqueRunId("ids");
      const w = await t.bridge.writer(runId);
      const ids = [0, 1, 2, 3].map((n) => w.publish("values", { n }));
      await w.end();
      const parsed = ids.map((id) => parseEventId(id)!);
      expect(parsed.map((p) => p.seq)).toEqual([0, 1, 2, 3]);
      for (let i = 1; i < parsed.length; i++) expect(parsed[i].epochMs).toBeGreaterThanOrEqual(parsed[i - 1].epochMs);
      for (const b of [t.bridge, t.peer]) {
        const c = collect(b, runId, null);
        expect(payloads(await c.done)).toEqual([0, 1, 2, 3, "end"]);
        expect(c.events().map((e) => e.id)).toEqual(ids);
        expect(c.events().map((e) => e.event)).toEqual(["values", "values", "values", "values"]);
      }
    });

    it("replays from any retained id, and from the oldest for an absent or unparsable id", async () => {
      const runId = uniqueRunId("replay");
      const w = await t.bridge.writer(runId);
      const ids = [0, 1, 2, 3, 4].map((n) => w.publish("custom", { n }));
      await w.end();
      for (const b of [t.bridge, t.peer]) {
        for (let i = 0; i < ids.length; i++) {
          expect(payloads(await collect(b, runId, ids[i]).done)).toEqual([...[0, 1, 2, 3, 4].slice(i + 1), "end"]);
        }
        expect(payloads(await collect(b, runId, "not-an-id").done)).toEqual([0, 1, 2, 3, 4, "end"]);
      }
    });

    it("keeps queue_maxsize events and answers an older id with exactly one gap", async () => {
      const runId = uniqueRunId("cap");
      const max = t.queueMaxsize;
      const w = await t.bridge.writer(runId);
      const ids = Array.from({ length: max + 3 }, (_, n) => w.publish("values", { n }));
      await w.end();
      for (const b of [t.bridge, t.peer]) {
        const all = await collect(b, runId, null).done;
        expect(payloads(all)).toEqual([...Array.from({ length: max }, (_, i) => i + 3), "end"]);
        // The id just before the window is still a complete resume point; one older is not.
        expect(payloads(await collect(b, runId, ids[2]).done)).toEqual(payloads(all));
        const gap = await collect(b, runId, ids[1]).done;
        expect(gap).toEqual([
          {
            kind: "gap",
            data: {
              code: "stream_replay_gap",
              run_id: runId,
              requested_event_id: ids[1],
              earliest_available_event_id: ids[3],
              latest_available_event_id: ids[max + 2],
              recovery: "reload_durable_state",
            },
          },
        ]);
      }
    });

    it("pushes live events to several subscribers, local ones synchronously, then end", async () => {
      const runId = uniqueRunId("live");
      const early = collect(t.peer, runId, null); // subscribed before the run wrote anything
      const w = await t.bridge.writer(runId);
      const a = collect(t.bridge, runId, null);
      const b = collect(t.bridge, runId, null);
      const remote = collect(t.peer, runId, null);
      w.publish("metadata", { n: 0 });
      expect(payloads(a.items)).toEqual([0]);
      expect(payloads(b.items)).toEqual([0]);
      w.publish("values", { n: 1 });
      await remote.eventCount(2);
      const id = w.publish("values", { n: 2 });
      a.stop();
      w.publish("values", { n: 3 });
      await w.end();
      expect(payloads(a.items)).toEqual([0, 1, 2]);
      expect(payloads(await b.done)).toEqual([0, 1, 2, 3, "end"]);
      expect(payloads(await remote.done)).toEqual([0, 1, 2, 3, "end"]);
      expect(payloads(await early.done)).toEqual([0, 1, 2, 3, "end"]);
      expect((await remote.done)[2]).toMatchObject({ kind: "event", id, event: "values" });
    });

    it("resumes on the other process after a Last-Event-ID, live", async () => {
      const runId = uniqueRunId("lastid");
      const w = await t.bridge.writer(runId);
      const first = w.publish("values", { n: 0 });
      w.publish("values", { n: 1 });
      await w.flush();
      const c = collect(t.peer, runId, first);
      await c.eventCount(1);
      w.publish("values", { n: 2 });
      await w.end();
      expect(payloads(await c.done)).toEqual([1, 2, "end"]);
    });

    it("continues the ids after the stored ones when a writer resumes (a takeover)", async () => {
      const runId = uniqueRunId("resume");
      const w = await t.bridge.writer(runId);
      const before = [0, 1, 2].map((n) => w.publish("values", { n }));
      await w.flush();
      const resumed = await t.peer.writer(runId, { resume: true });
      const next = resumed.publish("values", { n: 3 });
      expect(parseEventId(next)!.seq).toBe(3);
      expect(parseEventId(next)!.epochMs).toBeGreaterThanOrEqual(parseEventId(before[2])!.epochMs);
      await resumed.end();
      // Read where the run went on (the first writer lost it: its process is gone in real life).
      expect(payloads(await collect(t.peer, runId, before[1]).done)).toEqual([2, 3, "end"]);
      expect(payloads(await collect(t.peer, runId, null).done)).toEqual([0, 1, 2, 3, "end"]);
    });

    it("reports whether a run's stream is retained, sets the TTL on the first entry and refreshes it on each append", async () => {
      const runId = uniqueRunId("ttl");
      const ttlMs = t.ttlSeconds * 1000;
      expect(await t.bridge.has(runId)).toBe(false);
      const w = await t.bridge.writer(runId);
      w.publish("values", { n: 0 });
      await w.flush();
      expect(await t.peer.has(runId)).toBe(true);
      const first = (await t.remainingTtlMs(runId))!;
      expect(first).toBeGreaterThan(ttlMs - 5000);
      expect(first).toBeLessThanOrEqual(ttlMs);
      await t.age(runId, ttlMs / 2);
      expect(await t.remainingTtlMs(runId)).toBeLessThanOrEqual(ttlMs / 2);
      w.publish("values", { n: 1 });
      await w.flush();
      expect(await t.remainingTtlMs(runId)).toBeGreaterThan(ttlMs - 5000);
      await w.end();
      await t.age(runId, ttlMs + 1);
      await hasBecomes(t.bridge, runId, false);
      await hasBecomes(t.peer, runId, false);
      expect(await t.remainingTtlMs(runId)).toBeUndefined();
    });
  });
}
