import { hash } from "node:crypto";
import type { ToolCall } from "../messages";

/**
 * `json.dumps(value, sort_keys=True)` as Python prints it (`", "` / `": "`
 * separators, ASCII-only output), so call-set hashes match DeerFlow's.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
    return String(value);
  }
  if (typeof value === "string") return pythonString(value);
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value as object).sort();
    return `{${keys.map((k) => `${pythonString(k)}: ${pythonJsonDumps((value as Record<string, unknown>)[k])}`).join(", ")}}`;
  }
  return pythonString(String(value));
}

/** Characters Python's `json.dumps` writes as they are: printable ASCII (and DEL) except `"` and `\\`. */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/;

function pythonString(s: string): string {
  // Tool names, paths and most arguments need no escape: skip the per-character walk.
  if (VERBATIM.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (code < 0x20 || (code > 0x7f && code <= 0xffff)) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else if (code > 0xffff) {
      const v = code - 0x10000;
      out += `\\u${(0xd800 + (v >> 10)).toString(16)}\\u${(0xdc00 + (v & 0x3ff)).toString(16)}`;
    } else out += ch;
  }
  return out + '"';
}

function normaliseArgs(raw: unknown): { args: Record<string, unknown>; fallback: string | null } {
  if (raw && typeof raw === "object" && !Array.isArray(raw)) return { args: raw as Record<string, unknown>, fallback: null };
  if (typeof raw === "string") {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return { args: parsed as Record<string, unknown>, fallback: null };
      return { args: {}, fallback: pythonJsonDumps(parsed) };
    } catch {
      return { args: {}, fallback: raw };
    }
  }
  if (raw == null) return { args: {}, fallback: null };
  return { args: {}, fallback: pythonJsonDumps(raw) };
}

/** Args that identify "the same" call for tools without a dedicated rule. */
export const SALIENT_ARG_KEYS = ["path", "url", "query", "command", "pattern", "glob", "cmd"] as const;

const READ_BUCKET_LINES = 200;

function toInt(v: unknown, fallback: number): number {
  if (v == null) return fallback;
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

/**
 * The stable key of one call: `read_file` → path plus 200-line bucket,
 * `write_file`/`str_replace` → full args, others → salient args.
 */
export function stableToolKey(name: string, rawArgs: unknown): string {
  const { args, fallback } = normaliseArgs(rawArgs);
  if (name === "read_file" && fallback === null) {
    const path = (args.path as string) || "";
    let start = toInt(args.start_line, 1);
    let end = toInt(args.end_line, start);
    if (start > end) [start, end] = [end, start];
    const bs = Math.floor((Math.max(start, 1) - 1) / READ_BUCKET_LINES);
    const be = Math.floor((Math.max(end, 1) - 1) / READ_BUCKET_LINES);
    return `${path}:${bs}-${be}`;
  }
  if (name === "write_file" || name === "str_replace") return fallback ?? pythonJsonDumps(args);
  const salient: Record<string, unknown> = {};
  for (const key of SALIENT_ARG_KEYS) if (args[key] != null) salient[key] = args[key];
  if (Object.keys(salient).length) return pythonJsonDumps(salient);
  return fallback ?? pythonJsonDumps(args);
}

/** Order-independent hash of a tool-call set: `md5(sorted(name:key))[:12]`. */
export function hashToolCalls(calls: ReadonlyArray<Pick<ToolCall, "name" | "args">>): string {
  const parts = calls.map((c) => `${c.name ?? ""}:${stableToolKey(c.name ?? "", c.args)}`);
  parts.sort();
  // One-shot digest (UTF-8 input, as before): no Hash object per model step.
  return hash("md5", pythonJsonDumps(parts), "hex").slice(0, 12);
}
