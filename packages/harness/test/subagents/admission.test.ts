import { describe, expect, it } from "vitest";
import { SubagentAdmission, MIN_MAX_RUNNING_SUBAGENTS } from "../../src/subagents";

describe("SubagentAdmission", () => {
  it("never goes below 4 slots and defaults to 8", () => {
    expect(new SubagentAdmission(1).limit).toBe(MIN_MAX_RUNNING_SUBAGENTS);
    expect(new SubagentAdmission().limit).toBe(8);
    expect(new SubagentAdmission(1000).limit).toBe(64);
  });

  it("serves waiters in FIFO order and lets an aborted waiter leave the queue", async () => {
    const gate = new SubagentAdmission(4);
    const held = await Promise.all([1, 2, 3, 4].map(() => gate.acquire()));
    const order: string[] = [];
    const ac = new AbortController();
    const a = gate.acquire().then((r) => (order.push("a"), r));
    const b = gate.acquire(ac.signal).then(
      (r) => (order.push("b"), r),
      (e) => (order.push(`b:${(e as Error).name}`), undefined),
    );
    const c = gate.acquire().then((r) => (order.push("c"), r));
    expect(gate.waiting).toBe(3);
    ac.abort();
    await b;
    held[0]();
    held[1]();
    const [ra, rc] = await Promise.all([a, c]);
    expect(order).toEqual(["b:RunCancelledError", "a", "c"]);
    ra();
    rc!();
    held[2]();
    held[3]();
    expect(gate.active).toBe(0);
    // releasing twice is harmless
    held[0]();
    expect(gate.active).toBe(0);
  });
});
