/**
 * The current time as an ISO-8601 string (`2026-12-01T15:20:00.123Z`), the
 * format every stored record uses.
 *
 * A run's admission stamps its run record, its bookkeeping and its first
 * checkpoint, and a burst of runs does so hundreds of times within the same
 * millisecond; formatting a `Date` each time is a measurable part of that.
 * The text is kept for the millisecond it names, so calls within one
 * millisecond share one formatting. Millisecond resolution is all the format
 * has, so the result is the same as `new Date().toISOString()`.
 */
let lastMs = Number.NaN;
let lastText = "";

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
