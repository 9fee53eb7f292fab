/**
 * SSE wire framing: `event:` then `data:` then optional `id:`, blank line.
 * JSON keeps UTF-8 as-is; values JSON cannot represent become strings.
 */

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (typeof value === "function" || typeof value === "symbol") return String(value);
  return value;
}

/**
 * True when plain `JSON.stringify` gives the same text as with
 * {@link replacer}: no bigint, Error, function or symbol anywhere (values
 * with `toJSON`, e.g. dates, are left to JSON). Checking first is much
 * cheaper than stringifying with a replacer, which calls back into JS for
 * every key.
 */
function plainJson(value: unknown, depth: number): boolean {
  if (value === null) return true;
  const t = typeof value;
  if (t === "string" || t === "number" || t === "boolean" || t === "undefined") return true;
  if (t !== "object" || depth > 64) return false;
  if (value instanceof Error) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!plainJson(value[i], depth + 1)) return false;
    return true;
  }
  for (const key in value as Record<string, unknown>) {
    if (!plainJson((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/** JSON-encode a payload for a `data:` line (never throws). */
export function encodeData(data: unknown): string {
  try {
    const value = data === undefined ? null : data;
    const text = plainJson(value, 0) ? JSON.stringify(value) : JSON.stringify(value, replacer);
    return text === undefined ? "null" : text;
  } catch {
    return JSON.stringify(String(data));
  }
}

/** Format one SSE frame. Multi-line data is split over several `data:` lines. */
export function formatFrame(event: string, data: unknown, id?: string): string {
  const body = encodeData(data);
  if (!body.includes("\n")) return `event: ${event}\ndata: ${body}\n${id ? `id: ${id}\n` : ""}\n`;
  const lines = [`event: ${event}`];
  for (const line of body.split("\n")) lines.push(`data: ${line}`);
  if (id) lines.push(`id: ${id}`);
  return lines.join("\n") + "\n\n";
}

/** The heartbeat comment sent after an idle interval. */
export const HEARTBEAT_FRAME = ": heartbeat\n\n";

/** Format an event id `{epoch_ms}-{seq}`. */
export function formatEventId(epochMs: number, seq: number): string {
  return `${epochMs}-${seq}`;
}

/** Parse an event id; `undefined` when it is not `{int}-{int}`. */
export function parseEventId(id: string | null | undefined): { epochMs: number; seq: number } | undefined {
  if (!id) return undefined;
  const m = /^(\d+)-(\d+)$/.exec(id.trim());
  if (!m) return undefined;
  return { epochMs: Number(m[1]), seq: Number(m[2]) };
}
