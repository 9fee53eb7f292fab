/**
 * The gateway's logger: pino, loaded on first use, with the level of
 * `log_level` and DeerFlow's `logging.enhance` format: one JSON object per
 * line (`format: json`), or readable text lines. Every line passes the
 * redaction of {@link redactValue} (by key) and {@link redactText} (by value
 * pattern, over the whole serialised line) before it is written.
 */
import type { Logger, LoggerOptions } from "pino";
import { redactText, redactValue } from "./redact";
import type { LogFormat, LogLevel } from "./settings";

export type { Logger } from "pino";

/** Where log lines go: stdout by default; tests pass a collector. */
export interface LogDestination {
  write(line: string): void;
}

/** What {@link openLogger} builds. */
export interface LoggerSettings {
  level: LogLevel;
  format: LogFormat;
  /** Default `process.stdout`. */
  destination?: LogDestination;
  /** Colours in text lines (default: the destination is a TTY and `NO_COLOR` is unset). */
  color?: boolean;
}

const LEVEL_COLOR: Record<string, string> = { trace: "90", debug: "36", info: "32", warn: "33", error: "31", fatal: "35" };
/** Fields of a pino line the text format prints in its own place. */
const HEAD_KEYS = new Set(["level", "time", "msg", "pid", "component"]);

/** A destination that prints each JSON line as `time LEVEL [component] msg key=value …`. */
export function textDestination(out: LogDestination, color: boolean): LogDestination {
  const paint = (code: string, s: string) => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
  return {
    write(line: string) {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      const level = String(rec.level ?? "info");
      const parts = [String(rec.time ?? ""), paint(LEVEL_COLOR[level] ?? "0", level.toUpperCase().padEnd(5))];
      if (typeof rec.component === "string") parts.push(`[${rec.component}]`);
      if (rec.msg !== undefined) parts.push(String(rec.msg));
      for (const [k, v] of Object.entries(rec)) {
        if (HEAD_KEYS.has(k) || v === undefined) continue;
        parts.push(`${paint("90", `${k}=`)}${typeof v === "string" ? v : JSON.stringify(v)}`);
      }
      out.write(`${parts.join(" ")}\n`);
    },
  };
}

/** pino's options for these settings (exported for tests of the redaction). */
export function loggerOptions(level: LogLevel): LoggerOptions {
  return {
    level,
    base: { pid: process.pid },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    formatters: {
      level: (label) => ({ level: label }),
      // by key, at any depth (`authorization`, `api_key`, `cookie`, …); allocates only when something is redacted
      log: (obj) => redactValue(obj) as Record<string, unknown>,
    },
    // by value pattern over the whole line: the message text and every field, serialised errors included
    hooks: { streamWrite: (s) => redactText(s) },
  };
}

/** Build the logger (imports pino on the first call). */
export async function openLogger(settings: LoggerSettings): Promise<Logger> {
  const { pino } = await import("pino");
  const out = settings.destination ?? process.stdout;
  const tty = !settings.destination && !!process.stdout.isTTY;
  const color = settings.color ?? (tty && !process.env.NO_COLOR);
  const dest = settings.format === "json" ? out : textDestination(out, color);
  return pino(loggerOptions(settings.level), { write: (s: string) => dest.write(s) });
}

/**
 * A `(message) => void` sink (the form the runtime and the run service log
 * through) writing to `logger`: a leading `[component]` becomes the
 * `component` field, and the line's level is `warn` (what those sinks report:
 * fallbacks, failures, recoveries) unless given.
 */
export function messageSink(logger: Logger, level: "info" | "warn" | "error" = "warn"): (message: string) => void {
  return (message: string) => {
    const m = /^\[([\w:.-]+)\]\s*(.*)$/s.exec(message);
    if (m) logger[level]({ component: m[1] }, m[2]);
    else logger[level](message);
  };
}
