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

  it("pads the milliseconds and crosses seconds, minutes, days, 1970 and year 10000 as toISOString does", () => {
    vi.useFakeTimers();
    const stamps = [
      "2026-12-01T15:20:00.000Z", "2026-12-01T15:20:00.007Z", "2026-12-01T15:20:00.042Z", "2026-12-01T15:20:00.999Z",
      "2026-12-01T15:20:01.000Z", "2026-12-01T23:59:59.999Z", "2026-12-02T00:00:00.001Z",
    ];
    for (const stamp of stamps) {
      vi.setSystemTime(new Date(stamp));
      expect(isoNow()).toBe(stamp);
    }
    for (const t of [-1, -999, -1000, -1001, 0, 253402300799999, 253402300800000, 253402300800005]) {
      vi.setSystemTime(t);
      expect(isoNow()).toBe(new Date(t).toISOString());
    }
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
