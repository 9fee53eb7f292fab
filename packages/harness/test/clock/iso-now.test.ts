import { afterEach, describe, expect, it, vi } from "vitest";
import { isoNow } from "../../src/clock";

describe("isoNow", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is the ISO text of the current millisecond and follows the clock, also backwards", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-12-01T15:20:00.123Z"));
    expect(isoNow()).toBe("2026-12-01T15:20:00.123Z");
    expect(isoNow()).toBe("2026-12-01T15:20:00.123Z");
    vi.setSystemTime(new Date("2026-12-01T15:20:00.124Z"));
    expect(isoNow()).toBe("2026-12-01T15:20:00.124Z");
    // a clock set back (NTP) is followed too: the cache is for one millisecond, not a high-water mark
    vi.setSystemTime(new Date("2026-12-01T15:19:59.000Z"));
    expect(isoNow()).toBe("2026-12-01T15:19:59.000Z");
  });

  it("matches new Date().toISOString() on the real clock", () => {
    const before = Date.now();
    const text = isoNow();
    const after = Date.now();
    const t = Date.parse(text);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(after);
    expect(new Date(t).toISOString()).toBe(text);
  });
});
