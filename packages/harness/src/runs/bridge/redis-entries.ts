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

/** The error an append fails with when the stream is written by another (newer) writer. */
export const STALE_WRITER_ERROR = "DEERFLOW_STALE_WRITER";

/** The key next to a run's stream that holds the highest lease epoch of its writers (same TTL as the stream). */
export function epochKeyOf(streamKey: string): string {
  return `${streamKey}:writer_epoch`;
}

/**
 * Appends a batch of entries to one run's stream and sets its TTL, in one
 * command: one round trip and one reply per batch however many events it
 * holds. Events are capped at `maxlen`; the end marker is kept on top of
 * them (`maxlen + 1`).
 *
 * A writer with a lease epoch is refused when the stream's writer-epoch
 * key holds a higher one (a takeover raised it: this writer lost the run),
 * and raises it when its own is higher; whatever the stream's top is, so a
 * stale append that slipped in before cannot make the new owner's append
 * fail. A writer without an epoch goes in only when the stream's newest
 * entry is the one it wrote last (`prev`; empty for a new stream). A stream
 * that expired meanwhile is accepted.
 *
 * KEYS[1] = stream, KEYS[2] = its writer-epoch key; ARGV = maxlen, ttl
 * seconds (0: none), prev, epoch ('' for none), then id, kind, event, data
 * per entry.
 */
export const APPEND_SCRIPT = `
local epoch = ARGV[4]
if epoch ~= '' then
  local mine = tonumber(epoch)
  local held = tonumber(redis.call('GET', KEYS[2]) or '0')
  if mine < held then
    return redis.error_reply('${STALE_WRITER_ERROR} stream is written at lease epoch ' .. held .. ', this writer holds epoch ' .. mine)
  end
  if mine > held then redis.call('SET', KEYS[2], epoch) end
else
  local prev = ARGV[3]
  local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
  if top and top[1] ~= prev then
    return redis.error_reply('${STALE_WRITER_ERROR} stream is at ' .. top[1] .. ', the writer expected ' .. (prev == '' and 'a new stream' or prev))
  end
end
local maxlen = tonumber(ARGV[1])
for i = 5, #ARGV, 4 do
  if ARGV[i + 1] == 'end' then
    redis.call('XADD', KEYS[1], 'MAXLEN', maxlen + 1, ARGV[i], 'kind', 'end')
  else
    redis.call('XADD', KEYS[1], 'MAXLEN', maxlen, ARGV[i], 'kind', 'event', 'event', ARGV[i + 2], 'data', ARGV[i + 3])
  end
end
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return (#ARGV - 4) / 4
`;

/**
 * A takeover's writer opens: raise the stream's writer epoch to the
 * writer's (refused when a higher one is there already) and read the
 * stream, in one step, so every append of an older writer is either in
 * what is read or refused.
 *
 * KEYS[1] = stream, KEYS[2] = its writer-epoch key; ARGV = epoch, ttl seconds (0: none).
 */
export const RESUME_SCRIPT = `
local mine = tonumber(ARGV[1])
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
if mine < held then
  return redis.error_reply('${STALE_WRITER_ERROR} stream is written at lease epoch ' .. held .. ', this writer holds epoch ' .. mine)
end
if mine > held then
  redis.call('SET', KEYS[2], ARGV[1])
  local ttl = tonumber(ARGV[2])
  if ttl > 0 then redis.call('EXPIRE', KEYS[2], ttl) end
end
return redis.call('XRANGE', KEYS[1], '-', '+')
`;
