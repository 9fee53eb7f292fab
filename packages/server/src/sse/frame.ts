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

/** JSON-encode a payload for a `data:` line (never throws). */
export function encodeData(data: unknown): string {
  try {
    const text = JSON.stringify(data === undefined ? null : data, replacer);
    return text === undefined ? "null" : text;
  } catch {
    return JSON.stringify(String(data));
  }
}

/** Format one SSE frame. Multi-line data is split over several `data:` lines. */
export function formatFrame(event: string, data: unknown, id?: string): string {
  const body = encodeData(data);
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
