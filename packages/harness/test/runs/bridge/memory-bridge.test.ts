import { describe, expect, it } from "vitest";
import { createMemoryRunSignals, createMemoryStreamBridge } from "../../../src/runs/bridge";
import type { RunSignal, StreamItem } from "../../../src/runs/backend-types";
import { describeStreamBridgeContract } from "./bridge-contract";

function memoryUnderTest() {
  let now = 1_700_000_000_000;
  const ttlSeconds = 60;
  const bridge = createMemoryStreamBridge({ queueMaxsize: 8, ttlSeconds, clock: () => now });
  return {
    bridge,
    peer: bridge,
    queueMaxsize: 8,
    ttlSeconds,
    remainingTtlMs: async (runId: string) => bridge.remainingTtlMs(runId),
    age: async (_runId: string, ms: number) => {
      now += ms;
    },
    close: () => bridge.close(),
  };
}

describeStreamBridgeContract("memory", async () => memoryUnderTest());

describe("memory stream bridge", () => {
  it("keeps ids increasing when the clock steps back", async () => {
    let now = 2_000;
    const bridge = createMemoryStreamBridge({ queueMaxsize: 4, ttlSeconds: 0, clock: () => now });
    const w = await bridge.writer("r-clock");
    const a = w.publish("values", 1);
    now = 1_000;
    const b = w.publish("values", 2);
    expect([a, b]).toEqual(["2000-0", "2000-1"]);
    // ttlSeconds 0: never expires
    now += 10 ** 9;
    expect(await bridge.has("r-clock")).toBe(true);
  });

  it("does not expire a quiet run still being written; expires it after its end", async () => {
    let now = 1_000_000;
    const bridge = createMemoryStreamBridge({ queueMaxsize: 4, ttlSeconds: 60, clock: () => now });
    const w = await bridge.writer("r-quiet");
    const first = w.publish("values", 0);
    now += 3_600_000; // one long tool call, no events
    expect(await bridge.has("r-quiet")).toBe(true);
    const c: StreamItem[] = [];
    bridge.subscribe("r-quiet", first, (x) => c.push(x));
    w.publish("values", 1);
    await w.end();
    expect(c.map((x) => x.kind)).toEqual(["event", "end"]);
    now += 60_001;
    expect(await bridge.has("r-quiet")).toBe(false);
  });

  it("a throwing listener does not stop the writer or the other listeners; events after end are not delivered", async () => {
    const bridge = createMemoryStreamBridge({ queueMaxsize: 4, ttlSeconds: 60 });
    const w = await bridge.writer("r-throw");
    const got: StreamItem[] = [];
    bridge.subscribe("r-throw", null, () => {
      throw new Error("socket gone");
    });
    bridge.subscribe("r-throw", null, (x) => got.push(x));
    w.publish("values", 1);
    await w.end();
    const late = w.publish("values", 2);
    expect(late).toMatch(/^\d+-1$/);
    expect(got.map((x) => x.kind)).toEqual(["event", "end"]);
  });
});

describe("memory run signals", () => {
  it("delivers to every subscriber until it unsubscribes", async () => {
    const signals = createMemoryRunSignals();
    const a: RunSignal[] = [];
    const b: RunSignal[] = [];
    const stopA = signals.subscribe((s) => a.push(s));
    signals.subscribe((s) => {
      b.push(s);
      throw new Error("listener bug");
    });
    await signals.publish({ type: "cancel", runId: "r1", action: "interrupt" });
    stopA();
    await signals.publish({ type: "thread_released", threadId: "t1" });
    expect(a).toEqual([{ type: "cancel", runId: "r1", action: "interrupt" }]);
    expect(b).toHaveLength(2);
    await signals.close();
  });
});
