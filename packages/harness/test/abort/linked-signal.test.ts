import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { linkSignals } from "../../src/abort";

/** The references Node keeps in a source signal for each `AbortSignal.any` made from it (an internal; 0 when absent). */
function dependants(signal: AbortSignal): number {
  const sym = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
  return sym ? ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[sym]?.size ?? 0) : 0;
}

describe("linkSignals", () => {
  it("aborts with the reason of whichever source aborts first", () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals([a.signal, b.signal]);
    expect(linked.signal.aborted).toBe(false);
    b.abort(new Error("b went"));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe("b went");
    a.abort(new Error("a went later"));
    expect((linked.signal.reason as Error).message).toBe("b went");
    // an abort detaches it from the other sources too
    expect(getEventListeners(a.signal, "abort")).toEqual([]);
  });

  it("starts aborted when a source already is, and hands back a lone source as is", () => {
    const done = new AbortController();
    done.abort("early");
    const linked = linkSignals([new AbortController().signal, done.signal]);
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe("early");
    const only = new AbortController().signal;
    expect(linkSignals([only, undefined]).signal).toBe(only);
  });

  it("leaves nothing on a long-lived source once released, however many links were made", () => {
    const longLived = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const work = new AbortController();
      const linked = linkSignals([longLived.signal, work.signal]);
      linked.release();
      expect(linked.signal.aborted).toBe(false);
    }
    expect(getEventListeners(longLived.signal, "abort")).toEqual([]);
    expect(dependants(longLived.signal)).toBe(0);
  });

  it("a released link no longer follows its sources", () => {
    const a = new AbortController();
    const linked = linkSignals([a.signal, new AbortController().signal]);
    linked.release();
    a.abort();
    expect(linked.signal.aborted).toBe(false);
  });
});
