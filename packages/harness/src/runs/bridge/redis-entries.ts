import { parseEventId } from "./event-id";
import type { StoredEntry } from "./remote-subscription";

/**
 * How a run's events sit in its Redis stream (the fields DeerFlow's bridge
 * writes too): `kind` is `event` or `end`, `event` the SSE event name,
 * `data` its JSON.
 */
export const KIND_EVENT = "event";
export const KIND_END = "end";

/** A stream entry as ioredis returns it: `[id, [field, value, …]]`. */
export type RawEntry = [string, string[]];


/** JSON of an event's data (values JSON cannot hold become strings; never throws). */
export function encodeEventData(data: unknown): string {
  try {
    const text = JSON.stringify(data === undefined ? null : data);
    return text === undefined ? "null" : text;
  } catch {
    return JSON.stringify(String(data));
  }
}

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length - 1; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** Decode an entry; `undefined` for an id that is not ours (`{ms}-{seq}` always is). `item` is undefined for the end marker. */
export function decodeEntry(entry: RawEntry): StoredEntry | undefined {
  const [id, fields] = entry;
  const at = parseEventId(id);
  if (!at) return undefined;
  if (field(fields, "kind") === KIND_END) return { at, item: undefined };
  const raw = field(fields, "data");
  let data: unknown = null;
  if (raw !== undefined) {
    try {
      data = JSON.parse(raw);
    } catch {
      data = raw;
    }
  }
  return { at, item: { kind: "event", id, event: field(fields, "event") ?? "message", data } };
}

/** The error an append fails with when the stream's top is not where the writer left it. */
export const STALE_WRITER_ERROR = "DEERFLOW_STALE_WRITER";

/**
 * Appends a batch of entries to one run's stream and sets its TTL, in one
 * command: one round trip and one reply per batch however many events it
 * holds. Events are capped at `maxlen`; the end marker is kept on top of
 * them (`maxlen + 1`).
 *
 * The batch goes in only when the stream's newest entry is the one this
 * writer wrote last (`prev`; empty for a new stream): a writer whose run
 * was taken over by another process is refused instead of interleaving its
 * ids with the new owner's. A stream that expired meanwhile is accepted.
 *
 * KEYS[1] = stream; ARGV = maxlen, ttl seconds (0: none), prev, then id, kind, event, data per entry.
 */
export const APPEND_SCRIPT = `
local prev = ARGV[3]
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if top and top[1] ~= prev then
  return redis.error_reply('${STALE_WRITER_ERROR} stream is at ' .. top[1] .. ', the writer expected ' .. (prev == '' and 'a new stream' or prev))
end
local maxlen = tonumber(ARGV[1])
for i = 4, #ARGV, 4 do
  if ARGV[i + 1] == 'end' then
    redis.call('XADD', KEYS[1], 'MAXLEN', maxlen + 1, ARGV[i], 'kind', 'end')
  else
    redis.call('XADD', KEYS[1], 'MAXLEN', maxlen, ARGV[i], 'kind', 'event', 'event', ARGV[i + 2], 'data', ARGV[i + 3])
  end
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
return (#ARGV - 3) / 4
`;
