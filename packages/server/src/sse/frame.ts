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

const MESSAGE_TYPES = new Set(["human", "ai", "tool", "system"]);

/**
 * JSON of each message object, computed once. Messages in state are
 * immutable values (a change is a new object with the same id; the
 * checkpoint deltas and transcripts rely on that too), so one object always
 * encodes the same. A step's `updates`, `messages` and every later `values`
 * frame of the run then reuse the text instead of re-serialising the whole
 * conversation each time.
 */
const messageJson = new WeakMap<object, string>();

function isMessage(v: unknown): v is object {
  return typeof v === "object" && v !== null && !Array.isArray(v) && MESSAGE_TYPES.has((v as { type?: unknown }).type as string);
}

function encodeMessage(m: object): string {
  let text = messageJson.get(m);
  if (text === undefined) {
    text = encodeData(m);
    messageJson.set(m, text);
  }
  return text;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== "function";
}

/** A value inside an object, as JSON would write it (`undefined` = key omitted). */
function encodeField(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "function" || typeof v === "symbol") return JSON.stringify(String(v));
  return encodeData(v);
}

/** `[m1,m2,…]` from cached message texts, or `undefined` if an element is not a message. */
function encodeMessageList(list: unknown[]): string | undefined {
  let out = "[";
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isMessage(m)) return undefined;
    out += (i ? "," : "") + encodeMessage(m);
  }
  return out + "]";
}

/** An object key by key (JSON's key order and omissions), its `messages` list from the cache. */
function encodeStateLike(obj: Record<string, unknown>): string {
  let out = "{";
  let first = true;
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    const text = key === "messages" && Array.isArray(v) ? (encodeMessageList(v) ?? encodeData(v)) : encodeField(v);
    if (text === undefined) continue;
    out += (first ? "" : ",") + JSON.stringify(key) + ":" + text;
    first = false;
  }
  return out + "}";
}

/**
 * Encode a stream event's payload. Same text as {@link encodeData}, but the
 * shapes that carry messages — `values` (`{messages, …}`), `updates`
 * (`{node: {messages, …}}`) and `messages` tuples (`[message, metadata]`) —
 * take each message's JSON from a per-object cache.
 */
export function encodeEventData(data: unknown): string {
  try {
    if (Array.isArray(data) && data.length === 2 && isMessage(data[0])) return `[${encodeMessage(data[0])},${encodeData(data[1])}]`;
    if (isPlainObject(data)) {
      if (Array.isArray(data.messages)) return encodeStateLike(data);
      const keys = Object.keys(data);
      if (keys.length && keys.every((k) => isPlainObject(data[k]) && Array.isArray((data[k] as Record<string, unknown>).messages))) {
        let out = "{";
        keys.forEach((k, i) => {
          out += (i ? "," : "") + JSON.stringify(k) + ":" + encodeStateLike(data[k] as Record<string, unknown>);
        });
        return out + "}";
      }
    }
  } catch {
    /* fall through to the generic encoder */
  }
  return encodeData(data);
}

/**
 * Format one SSE frame. The payload is always one `data:` line: JSON text
 * written without indentation has no line breaks (a CR or LF inside a string
 * is escaped), so there is nothing to split, and no need to scan the text for
 * them, which would also flatten it in memory once more before the write.
 */
export function formatFrame(event: string, data: unknown, id?: string): string {
  return `event: ${event}\ndata: ${encodeEventData(data)}\n${id ? `id: ${id}\n` : ""}\n`;
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
