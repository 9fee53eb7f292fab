import { describe, expect, it, vi } from "vitest";
import { MemoryQueueFullError, MemoryUpdateQueue } from "../../src/memory";
import type { MemoryQueueItem } from "../../src/memory";

const item = (threadId: string, text: string, signals: string[] = [], userId = "u"): MemoryQueueItem => ({ threadId, userId, agentName: null, turns: [{ role: "human", text }], signals: new Set(signals as never) });

describe("memory update queue", () => {
  it("coalesces per (thread, user, agent): the newest conversation wins and signals merge", async () => {
    const seen: MemoryQueueItem[] = [];
    const q = new MemoryUpdateQueue({ debounceMs: 60_000, maxDepth: 0, process: async (i) => void seen.push(i) });
    q.add(item("t1", "first", ["correction"]));
    q.add(item("t1", "second"));
    q.add(item("t1", "other user", [], "v"));
    q.add(item("t2", "other thread"));
    expect(q.pending).toBe(3);
    await q.flush();
    expect(seen.map((i) => [i.threadId, i.userId, i.turns[0].text])).toEqual([
      ["t1", "u", "second"],
      ["t1", "v", "other user"],
      ["t2", "u", "other thread"],
    ]);
    expect([...seen[0].signals]).toEqual(["correction"]);
    expect(q.pending).toBe(0);
  });

  it("debounces: processing starts debounce after the last add", async () => {
    // Fake timers: the debounce is measured on the queue's own timer, never against the machine's load.
    vi.useFakeTimers();
    try {
      const seen: string[] = [];
      const q = new MemoryUpdateQueue({ debounceMs: 80, maxDepth: 0, process: async (i) => void seen.push(i.turns[0].text) });
      q.add(item("t1", "a"));
      await vi.advanceTimersByTimeAsync(40);
      q.add(item("t1", "b"));
      // 79 ms after the last add: still waiting (the first add's deadline, 80 ms, has passed)
      await vi.advanceTimersByTimeAsync(79);
      expect(seen).toEqual([]);
      expect(q.pending).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(seen).toEqual(["b"]);
      expect(q.pending).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses non-signal items past the depth limit but always admits signal items", () => {
    const q = new MemoryUpdateQueue({ debounceMs: 60_000, maxDepth: 2, process: async () => {} });
    q.add(item("t1", "a"));
    q.add(item("t2", "b"));
    expect(() => q.add(item("t3", "c"))).toThrow(MemoryQueueFullError);
    q.add(item("t1", "a again"));
    q.add(item("t4", "I prefer tea", ["preference"]));
    expect(q.pending).toBe(3);
    void q.close(10);
  });

  it("flush waits for an in-flight batch and for items added meanwhile; a failing item does not stop the rest", async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const slowStarted = new Promise<void>((r) => (started = r));
    const q = new MemoryUpdateQueue({
      debounceMs: 0,
      maxDepth: 0,
      process: async (i) => {
        if (i.turns[0].text === "slow") {
          started();
          await gate;
        }
        if (i.turns[0].text === "boom") throw new Error("updater down");
        seen.push(i.turns[0].text);
      },
      onError: (e) => void errors.push(e),
    });
    q.add(item("t1", "slow"));
    await slowStarted;
    expect(q.processing).toBe(true);
    q.add(item("t2", "boom"));
    q.add(item("t3", "late"));
    const flushed = q.flush();
    release();
    await flushed;
    expect(seen).toEqual(["slow", "late"]);
    expect(errors).toHaveLength(1);
    expect(q.pending + Number(q.processing)).toBe(0);
  });

  it("close() gives up after its timeout and refuses new items", async () => {
    const q = new MemoryUpdateQueue({ debounceMs: 0, maxDepth: 0, process: () => new Promise(() => {}) });
    q.add(item("t1", "never ends"));
    expect(await q.close(30)).toBe(false);
    q.add(item("t2", "after close"));
    expect(q.pending).toBe(0);
  });
});
