import { describe, expect, it } from "vitest";
import { idlePatternWorkers, PatternMatcher } from "../../src/sandbox/pattern-worker";

describe("PatternMatcher worker reuse", () => {
  it("hands its worker to the next call instead of starting one per call, and never more than two wait", async () => {
    const first = new PatternMatcher("fine", "", "fine");
    expect(await first.match(["a", "fine line"])).toEqual([1]);
    await first.close();
    const idle = idlePatternWorkers();
    expect(idle).toBeGreaterThanOrEqual(1);
    const second = new PatternMatcher("a", "", "a");
    expect(await second.count(["banana"])).toEqual([3]);
    // the second call took the waiting worker
    expect(idlePatternWorkers()).toBe(idle - 1);
    await second.close();
    const many = [0, 1, 2, 3].map((i) => new PatternMatcher(String(i), "", String(i)));
    await Promise.all(many.map((m, i) => m.match([String(i)])));
    await Promise.all(many.map((m) => m.close()));
    expect(idlePatternWorkers()).toBe(2);
  });

  it("a worker that ran out of budget is not handed on: the next call still answers", async () => {
    const slow = new PatternMatcher("(a*)*b", "", "(a*)*b", 200);
    await expect(slow.match(["a".repeat(40)])).rejects.toMatchObject({ code: "pattern_too_slow" });
    await slow.close();
    const next = new PatternMatcher("ok", "", "ok");
    expect(await next.match(["ok"])).toEqual([0]);
    await next.close();
  });
});
