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
/** The second of the last text and its formatted part up to the milliseconds (`2026-12-01T15:20:00.`). */
let lastSecond = Number.NaN;
let secondPrefix = "";

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    // A run's steps fall in different milliseconds of the same second: only the milliseconds are new text then
    // (formatting a Date goes through a C printf each time, a few thousand instructions per stamp).
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      const whole = new Date(second * 1000).toISOString();
      secondPrefix = whole.slice(0, whole.length - 4); // without "000Z"
      lastSecond = second;
    }
    const frac = ms - second * 1000;
    lastText = `${secondPrefix}${frac < 10 ? "00" : frac < 100 ? "0" : ""}${frac}Z`;
    lastMs = ms;
  }
  return lastText;
}
