import { describe, expect, it } from "vitest";
import { nextRunAt, normalizeCron, parseRunAt, Schedule, ScheduleError, validateTimezone } from "../../src/scheduler";

/** The next `n` slots after `from` (UTC ISO). */
function slots(cron: string, timezone: string, from: string, n: number): string[] {
  const s = new Schedule("cron", { cron }, timezone);
  const out: string[] = [];
  let t = Date.parse(from);
  for (let i = 0; i < n; i++) {
    t = s.nextAfter(t)!;
    out.push(new Date(t).toISOString());
  }
  return out;
}

describe("schedules across the 2026 DST transitions", () => {
  it("Europe/London spring forward (29 March): 09:00 local moves from 09:00Z to 08:00Z; the missing 01:30 runs once, at the end of the gap", () => {
    expect(slots("0 9 * * *", "Europe/London", "2026-03-27T12:00:00Z", 3)).toEqual(["2026-03-28T09:00:00.000Z", "2026-03-29T08:00:00.000Z", "2026-03-30T08:00:00.000Z"]);
    // 01:30 does not exist on 29 March (01:00 GMT jumps to 02:00 BST): one run, at 02:00 BST = 01:00Z
    expect(slots("30 1 * * *", "Europe/London", "2026-03-27T12:00:00Z", 3)).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
  });

  it("Europe/London fall back (25 October): the repeated 01:30 runs once, at its first occurrence; half-hourly keeps real 30-minute spacing", () => {
    expect(slots("30 1 * * *", "Europe/London", "2026-10-23T12:00:00Z", 3)).toEqual(["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
    expect(slots("*/30 * * * *", "Europe/London", "2026-10-25T00:00:00Z", 4)).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T01:30:00.000Z", "2026-10-25T02:00:00.000Z"]);
  });

  it("America/New_York spring forward (8 March): the missing 02:30 runs once at 03:00 EDT; 09:00 local moves from 14:00Z to 13:00Z", () => {
    expect(slots("30 2 * * *", "America/New_York", "2026-03-06T12:00:00Z", 3)).toEqual(["2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"]);
    expect(slots("0 9 * * *", "America/New_York", "2026-03-06T20:00:00Z", 3)).toEqual(["2026-03-07T14:00:00.000Z", "2026-03-08T13:00:00.000Z", "2026-03-09T13:00:00.000Z"]);
  });

  it("America/New_York fall back (1 November): the repeated 01:30 runs once, in EDT", () => {
    expect(slots("30 1 * * *", "America/New_York", "2026-10-30T12:00:00Z", 3)).toEqual(["2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
  });
});

describe("schedule validation", () => {
  it("refuses unknown zones, cron expressions without five fields and unparsable run times, naming what was expected", () => {
    expect(() => validateTimezone("Mars/Olympus")).toThrow(/Unknown timezone: Mars\/Olympus.*IANA/);
    expect(() => normalizeCron("0 9 * *")).toThrow(/exactly 5 fields.*got 4/);
    expect(() => normalizeCron("0 0 9 * * *")).toThrow(/exactly 5 fields.*got 6/);
    expect(() => normalizeCron("61 9 * * *")).toThrow(ScheduleError);
    expect(normalizeCron("  0   9 * *   1 ")).toBe("0 9 * * 1");
    expect(() => parseRunAt("tomorrow")).toThrow(/not an ISO-8601 time/);
    expect(() => new Schedule("cron", {}, "UTC")).toThrow(/requires schedule_spec.cron/);
  });

  it("a once schedule has one slot, and none once it passed; a time without an offset is UTC", () => {
    expect(nextRunAt("once", { run_at: "2026-05-01T10:00:00" }, "Europe/London", Date.parse("2026-04-30T00:00:00Z"))).toBe("2026-05-01T10:00:00.000Z");
    expect(nextRunAt("once", { run_at: "2026-05-01T10:00:00+02:00" }, "UTC", Date.parse("2026-04-30T00:00:00Z"))).toBe("2026-05-01T08:00:00.000Z");
    expect(nextRunAt("once", { run_at: "2026-05-01T10:00:00Z" }, "UTC", Date.parse("2026-05-01T10:00:00Z"))).toBeNull();
  });

  it("counts the slots missed over a long downtime and finds the latest without enumerating all of them", () => {
    const s = new Schedule("cron", { cron: "* * * * *" }, "UTC");
    const r = s.slotsThrough(Date.parse("2026-01-01T00:00:00Z"), Date.parse("2026-01-03T00:00:30Z"));
    expect(r).toMatchObject({ count: 100, capped: true });
    expect(new Date(r.latest).toISOString()).toBe("2026-01-03T00:00:00.000Z");
    const few = s.slotsThrough(Date.parse("2026-01-01T00:00:00Z"), Date.parse("2026-01-01T00:02:10Z"));
    expect(few).toEqual({ count: 3, latest: Date.parse("2026-01-01T00:02:00Z"), capped: false });
  });
});
