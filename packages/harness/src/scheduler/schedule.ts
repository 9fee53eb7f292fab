import { Cron } from "croner";
import { DeerFlowError } from "../errors";
import type { ScheduleSpec, ScheduleType } from "./types";

/** A schedule that cannot be used: an unknown time zone, a malformed cron expression or run time. */
export class ScheduleError extends DeerFlowError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("schedule_invalid", message, { details });
  }
}

/** `zone` when it is an IANA time zone this runtime knows, else a ScheduleError. */
export function validateTimezone(zone: string): string {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
  } catch {
    throw new ScheduleError(`Unknown timezone: ${zone} (expected an IANA name such as Europe/London or UTC).`, { timezone: zone });
  }
  return zone;
}

/**
 * A cron expression of exactly five fields (minute hour day-of-month month
 * day-of-week), single-spaced. Croner would accept a seconds field as well;
 * DeerFlow's schedules have five, so a sixth is refused rather than read as seconds.
 */
export function normalizeCron(expr: string): string {
  const parts = expr.split(/\s+/).filter(Boolean);
  if (parts.length !== 5) throw new ScheduleError(`Cron expression must contain exactly 5 fields (minute hour day month weekday), got ${parts.length}: '${expr}'.`, { cron: expr });
  const normalized = parts.join(" ");
  try {
    new Cron(normalized, { paused: true, timezone: "UTC" });
  } catch (err) {
    throw new ScheduleError(`Invalid cron expression '${normalized}': ${(err as Error).message}`, { cron: normalized });
  }
  return normalized;
}

/** The instant of `run_at` (an offset-less time is UTC). */
export function parseRunAt(raw: unknown): number {
  if (typeof raw !== "string" || !raw.trim()) throw new ScheduleError("once schedule requires schedule_spec.run_at (an ISO-8601 time).");
  const text = raw.trim();
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const ms = Date.parse(hasZone || !/T|\s\d/.test(text) ? text : `${text}Z`);
  if (!Number.isFinite(ms)) throw new ScheduleError(`schedule_spec.run_at '${text}' is not an ISO-8601 time.`, { run_at: text });
  return ms;
}

/**
 * A task's schedule, ready to say when its slots are. Cron slots are computed
 * by croner in the task's zone: across a spring-forward gap a slot whose local
 * time does not exist runs once at the first instant after the gap; across a
 * fall-back overlap a fixed-time slot runs once, at its first occurrence,
 * while interval expressions (`*\/30 * * * *`) keep their real-time spacing.
 */
export class Schedule {
  private readonly cron?: Cron;
  private readonly runAt?: number;

  constructor(
    readonly type: ScheduleType,
    spec: ScheduleSpec,
    readonly timezone: string,
  ) {
    validateTimezone(timezone);
    if (type === "cron") {
      if (typeof spec.cron !== "string") throw new ScheduleError("cron schedule requires schedule_spec.cron.");
      this.cron = new Cron(normalizeCron(spec.cron), { paused: true, timezone });
    } else if (type === "once") {
      this.runAt = parseRunAt(spec.run_at);
    } else {
      throw new ScheduleError(`Unsupported schedule_type '${String(type)}' (expected once or cron).`);
    }
  }

  /** The first slot strictly after `afterMs`, or null when none is left. */
  nextAfter(afterMs: number): number | null {
    if (this.cron) {
      const next = this.cron.nextRun(new Date(afterMs));
      return next ? next.getTime() : null;
    }
    return this.runAt! > afterMs ? this.runAt! : null;
  }

  /**
   * The slots from `firstMs` (itself a slot) up to and including `untilMs`:
   * how many (counted up to `cap`, `capped` past it, so a long downtime is
   * summarised, not enumerated) and the latest of them.
   */
  slotsThrough(firstMs: number, untilMs: number, cap = 100): { count: number; latest: number; capped: boolean } {
    if (firstMs > untilMs) return { count: 0, latest: firstMs, capped: false };
    let count = 1;
    let latest = firstMs;
    while (count < cap) {
      const next = this.nextAfter(latest);
      if (next === null || next > untilMs) return { count, latest, capped: false };
      count += 1;
      latest = next;
    }
    if (this.cron) {
      // croner's previous slot is strictly before its reference (whole seconds): one second past untilMs includes it
      const prev = this.cron.previousRuns(1, new Date(Math.floor(untilMs / 1000) * 1000 + 1000))[0];
      if (prev && prev.getTime() <= untilMs && prev.getTime() > latest) latest = prev.getTime();
    }
    return { count, latest, capped: true };
  }
}

/** The first slot of a schedule strictly after `nowMs` (ISO-8601), or null. */
export function nextRunAt(type: ScheduleType, spec: ScheduleSpec, timezone: string, nowMs: number): string | null {
  const next = new Schedule(type, spec, timezone).nextAfter(nowMs);
  return next === null ? null : new Date(next).toISOString();
}
