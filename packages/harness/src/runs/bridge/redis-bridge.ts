import type { Redis } from "ioredis";
import type { RunStreamWriter, StreamBridge, StreamListener, StreamWriterOptions } from "../backend-types";
import { StreamBridgeError } from "../../errors";
import { APPEND_SCRIPT, decodeEntry, encodeEventData, epochKeyOf, KIND_END, KIND_EVENT, RESUME_SCRIPT, STALE_WRITER_ERROR } from "./redis-entries";
import type { RawEntry } from "./redis-entries";
import { RedisStreamReader } from "./redis-reader";
import { BatchedRunWriter, RunWriters } from "./batched-writer";
import type { WriterDoubt } from "./batched-writer";
import { RunStream } from "./run-stream";
import type { StreamEventItem } from "./run-stream";

/** DeerFlow's key prefix: a run's stream is `deerflow:stream_bridge:{run_id}`. */
export const DEFAULT_STREAM_KEY_PREFIX = "deerflow:stream_bridge";

/** Entries sent in one command at most; a larger burst goes out in several. */
const MAX_BATCH = 512;

/**
 * After this long without an acknowledged append (ms) a writer is in doubt
 * whether it still owns its run (see {@link WriterDoubt}): below any sensible
 * `lease_seconds + grace_seconds`, and a busy run appends far more often, so
 * only the first event after a quiet second waits one round trip before this
 * process's subscribers see it.
 */
export const IN_DOUBT_AFTER_MS = 1000;

/** What {@link createRedisStreamBridge} runs on (the connections are the transport's). */
export interface RedisStreamBridgeOptions {
  /** Commands: appends, replays, EXISTS, CLIENT UNBLOCK. */
  cmd: Redis;
  /** Only the shared blocking XREAD (a blocked connection cannot run anything else). */
  reader: Redis;
  queueMaxsize: number;
  ttlSeconds: number;
  keyPrefix?: string;
  /** Longest a blocking read waits with nothing to read (ms; default 5000). A joining run wakes it at once. */
  readerBlockMs?: number;
  /** An error message with credentials masked. */
  clean(err: unknown): string;
  /** See {@link IN_DOUBT_AFTER_MS} (tests shorten it). */
  inDoubtAfterMs?: number;
  /** The clock of the in-doubt check (tests move it by hand; ids always use the wall clock). */
  clock?: () => number;
}

type ScriptCommand = (key: string, epochKey: string, ...args: (string | number)[]) => Promise<unknown>;

/** One run's writer: the local window gets each event at once, Redis gets it in the next batch (one scripted command). */
class RedisRunWriter extends BatchedRunWriter {
  /** The id of the newest entry sent to Redis ('' before the first): the next batch must find it on top. */
  private sentTop: string;

  constructor(
    private readonly core: RedisBridgeCore,
    runId: string,
    readonly key: string,
    stream: RunStream,
    storedTop: string | undefined,
    /** The writer's lease epoch, read per batch (see {@link StreamWriterOptions.epoch}). */
    private readonly epoch: (() => number | undefined) | undefined,
  ) {
    super(core.writers, runId, stream, MAX_BATCH, core.doubt);
    this.sentTop = storedTop ?? "";
  }

  protected write(events: StreamEventItem[], endId: string | undefined): Promise<unknown> {
    const epoch = this.epoch?.();
    const args: (string | number)[] = [this.core.maxlen, this.core.ttlSeconds, this.sentTop, epoch === undefined ? "" : epoch];
    for (const item of events) args.push(item.id, KIND_EVENT, item.event, encodeEventData(item.data));
    if (events.length) this.sentTop = events[events.length - 1].id;
    if (endId !== undefined) {
      args.push(endId, KIND_END, "", "");
      this.sentTop = endId;
    }
    return this.core.append(this.key, epochKeyOf(this.key), ...args);
  }

  protected failure(err: unknown): StreamBridgeError {
    const message = this.core.clean(err);
    return message.includes(STALE_WRITER_ERROR)
      ? new StreamBridgeError(`Run ${this.runId} is executed by another process now; this process stopped streaming it (resume from this event's id to follow it). Redis stream bridge: the run is written by another process (taken over): ${message.replace(STALE_WRITER_ERROR, "").trim()}.`, {
          code: "stream_bridge_stale_writer",
          details: { run_id: this.runId },
        })
      : new StreamBridgeError(`Redis stream bridge: storing the events of run ${this.runId} failed: ${message}`, {
          code: "stream_bridge_write_failed",
          details: { run_id: this.runId },
        });
  }
}

/** The shared part of every writer: the append command, its settings, the local writers and their batching. */
class RedisBridgeCore {
  readonly maxlen: number;
  readonly ttlSeconds: number;
  readonly clean: (err: unknown) => string;
  readonly append: ScriptCommand;
  /** Raise the writer epoch and read the stream (a takeover's writer opens). */
  readonly resume: ScriptCommand;
  readonly writers = new RunWriters<RedisRunWriter>();
  readonly doubt: WriterDoubt;

  constructor(cmd: Redis, options: RedisStreamBridgeOptions) {
    this.maxlen = Math.max(1, options.queueMaxsize);
    this.ttlSeconds = options.ttlSeconds > 0 ? Math.ceil(options.ttlSeconds) : 0;
    this.clean = options.clean;
    this.doubt = { afterMs: options.inDoubtAfterMs ?? IN_DOUBT_AFTER_MS, clock: options.clock ?? Date.now };
    if (!(cmd as unknown as Record<string, unknown>).deerflowStreamAppend) {
      cmd.defineCommand("deerflowStreamAppend", { numberOfKeys: 2, lua: APPEND_SCRIPT });
      cmd.defineCommand("deerflowStreamResume", { numberOfKeys: 2, lua: RESUME_SCRIPT });
    }
    const scripts = cmd as unknown as { deerflowStreamAppend: ScriptCommand; deerflowStreamResume: ScriptCommand };
    this.append = (key, epochKey, ...args) => scripts.deerflowStreamAppend.call(cmd, key, epochKey, ...args);
    this.resume = (key, epochKey, ...args) => scripts.deerflowStreamResume.call(cmd, key, epochKey, ...args);
  }
}

/**
 * The Redis stream bridge: one stream per run (`{prefix}:{run_id}`),
 * capped at `queue_maxsize` with MAXLEN, expiring `stream_ttl_seconds`
 * after its last append. The writer assigns the ids, so `publish` returns
 * the id at once and this process's subscribers get the event synchronously
 * from a local window (after a quiet second only once Redis took it, see
 * {@link IN_DOUBT_AFTER_MS}); Redis gets the events in order, batched per
 * event-loop turn into one scripted command per run (XADDs + EXPIRE).
 */
export function createRedisStreamBridge(options: RedisStreamBridgeOptions): StreamBridge & {
  /** The Redis key of a run's stream. */
  keyOf(runId: string): string;
} {
  const prefix = (options.keyPrefix ?? DEFAULT_STREAM_KEY_PREFIX).replace(/:+$/, "");
  const keyOf = (runId: string) => `${prefix}:${runId}`;
  const core = new RedisBridgeCore(options.cmd, options);
  const reader = new RedisStreamReader(options.cmd, options.reader, keyOf, options.clean, options.readerBlockMs);
  const { cmd } = options;
  let closed = false;

  function unavailable(action: string, runId: string, err: unknown): StreamBridgeError {
    return new StreamBridgeError(`Redis stream bridge: ${action} run ${runId} failed: ${options.clean(err)}`, {
      code: "stream_bridge_unavailable",
      details: { run_id: runId },
    });
  }

  return {
    kind: "redis",
    keyOf,
    async writer(runId: string, opts?: StreamWriterOptions): Promise<RunStreamWriter> {
      if (closed) throw new StreamBridgeError("The Redis stream bridge is closed.", { code: "stream_bridge_closed" });
      const key = keyOf(runId);
      let stream: RunStream;
      let top: string | undefined;
      if (opts?.resume) {
        // A takeover: go on after the last stored entry, and keep the retained ones for this process's subscribers.
        // With a lease epoch the read also raises the stream's writer epoch: the replaced owner appends nothing after it.
        const epoch = opts.epoch?.();
        let raw: RawEntry[];
        try {
          raw = (epoch === undefined ? await cmd.xrange(key, "-", "+") : await core.resume(key, epochKeyOf(key), epoch, core.ttlSeconds)) as RawEntry[];
        } catch (err) {
          const message = options.clean(err);
          if (message.includes(STALE_WRITER_ERROR)) {
            throw new StreamBridgeError(`Redis stream bridge: run ${runId} is written by another process now (a later takeover); ${message.replace(STALE_WRITER_ERROR, "").trim()}.`, {
              code: "stream_bridge_stale_writer",
              details: { run_id: runId },
            });
          }
          throw unavailable("resuming the stream of", runId, err);
        }
        const entries = raw.map(decodeEntry).filter((e) => e !== undefined);
        stream = new RunStream(runId, core.maxlen, Number.POSITIVE_INFINITY, entries.at(-1)?.at);
        for (const e of entries) if (e.item) stream.push(e.item);
        top = raw.at(-1)?.[0];
      } else {
        stream = new RunStream(runId, core.maxlen, Number.POSITIVE_INFINITY);
      }
      const w = new RedisRunWriter(core, runId, key, stream, top, opts?.epoch);
      core.writers.local.set(runId, w);
      return w;
    },
    subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
      if (closed) throw new StreamBridgeError("The Redis stream bridge is closed.", { code: "stream_bridge_closed" });
      const local = core.writers.local.get(runId);
      if (local) return local.stream.listen(lastEventId, listener);
      return reader.subscribe(runId, lastEventId, listener);
    },
    async has(runId: string): Promise<boolean> {
      if (core.writers.local.get(runId)?.stream.hasEntries) return true;
      try {
        return (await cmd.exists(keyOf(runId))) > 0;
      } catch (err) {
        throw unavailable("looking up the stream of", runId, err);
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await core.writers.drain();
      await reader.close();
    },
  };
}
