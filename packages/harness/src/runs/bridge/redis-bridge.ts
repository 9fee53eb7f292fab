import type { Redis } from "ioredis";
import type { RunStreamWriter, StreamBridge, StreamListener } from "../backend-types";
import { StreamBridgeError } from "../../errors";
import { APPEND_SCRIPT, decodeEntry, encodeEventData, KIND_END, KIND_EVENT, STALE_WRITER_ERROR } from "./redis-entries";
import type { RawEntry } from "./redis-entries";
import { RedisStreamReader } from "./redis-reader";
import { RunStream } from "./run-stream";
import type { StreamEventItem } from "./run-stream";

/** DeerFlow's key prefix: a run's stream is `deerflow:stream_bridge:{run_id}`. */
export const DEFAULT_STREAM_KEY_PREFIX = "deerflow:stream_bridge";

/** Entries sent in one command at most; a larger burst goes out in several. */
const MAX_BATCH = 512;

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
}

type AppendCommand = (key: string, ...args: (string | number)[]) => Promise<unknown>;

interface FlushWaiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** One run's writer: the local window gets each event at once, Redis gets it in the next batch. */
class RedisRunWriter implements RunStreamWriter {
  private pending: StreamEventItem[] = [];
  private pendingEnd: string | undefined;
  private storedSeq: number;
  private lastSeq: number;
  private waiters: FlushWaiter[] = [];
  private error: StreamBridgeError | undefined;
  private ended = false;
  /** The id of the newest entry sent to Redis ('' before the first): the next batch must find it on top. */
  private sentTop: string;

  constructor(
    private readonly core: RedisBridgeCore,
    readonly runId: string,
    readonly key: string,
    readonly stream: RunStream,
    storedTop: string | undefined,
  ) {
    this.sentTop = storedTop ?? "";
    this.storedSeq = stream.ids.nextSeq - 1;
    this.lastSeq = this.storedSeq;
  }

  publish(event: string, data: unknown): string {
    if (this.ended || this.error) return this.stream.ids.next(Date.now()).id;
    const item = this.stream.append(event, data, Date.now());
    this.lastSeq = this.stream.ids.nextSeq - 1;
    this.pending.push(item);
    if (this.pending.length >= MAX_BATCH) this.send();
    else this.core.schedule(this);
    return item.id;
  }

  async end(): Promise<void> {
    if (!this.ended && !this.error) {
      this.ended = true;
      this.pendingEnd = this.stream.ids.next(Date.now()).id;
      this.lastSeq = this.stream.ids.nextSeq - 1;
      this.core.schedule(this);
      this.stream.end();
    }
    await this.flush();
    this.core.forget(this);
  }

  flush(): Promise<void> {
    if (this.error) return Promise.reject(this.error);
    if (this.storedSeq >= this.lastSeq) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.waiters.push({ seq: this.lastSeq, resolve, reject }));
  }

  /** Send what is pending as one command (called once per tick by the core, or when a batch is full). */
  send(): void {
    if (this.error || (!this.pending.length && this.pendingEnd === undefined)) return;
    const batch = this.pending;
    this.pending = [];
    const args: (string | number)[] = [this.core.maxlen, this.core.ttlSeconds, this.sentTop];
    for (const item of batch) args.push(item.id, KIND_EVENT, item.event, encodeEventData(item.data));
    if (batch.length) this.sentTop = batch[batch.length - 1].id;
    if (this.pendingEnd !== undefined) {
      args.push(this.pendingEnd, KIND_END, "", "");
      this.sentTop = this.pendingEnd;
      this.pendingEnd = undefined;
    }
    const upTo = this.lastSeq;
    this.core.append(this.key, ...args).then(
      () => this.stored(upTo),
      (err: unknown) => this.failed(err),
    );
  }

  private stored(seq: number): void {
    if (seq > this.storedSeq) this.storedSeq = seq;
    if (!this.waiters.length) return;
    const still: FlushWaiter[] = [];
    for (const w of this.waiters) (w.seq <= this.storedSeq ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  private failed(err: unknown): void {
    if (this.error) return;
    const message = this.core.clean(err);
    this.error = message.includes(STALE_WRITER_ERROR)
      ? new StreamBridgeError(`Redis stream bridge: run ${this.runId} is written by another process now (taken over); this writer stopped (${message.replace(STALE_WRITER_ERROR, "").trim()}).`, {
          code: "stream_bridge_stale_writer",
          details: { run_id: this.runId },
        })
      : new StreamBridgeError(`Redis stream bridge: storing the events of run ${this.runId} failed: ${message}`, {
          code: "stream_bridge_write_failed",
          details: { run_id: this.runId },
        });
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(this.error);
    this.stream.fail(this.error.message);
    this.core.forget(this);
  }
}

/** The shared part of every writer: batching, the append command, the local windows. */
class RedisBridgeCore {
  readonly maxlen: number;
  readonly ttlSeconds: number;
  readonly clean: (err: unknown) => string;
  readonly append: AppendCommand;
  /** Runs written by this process: local subscribers read these, synchronously. */
  readonly local = new Map<string, RedisRunWriter>();
  private readonly dirty = new Set<RedisRunWriter>();
  private scheduled = false;
  private readonly sendAll = () => {
    this.scheduled = false;
    const writers = [...this.dirty];
    this.dirty.clear();
    for (const w of writers) w.send();
  };

  constructor(cmd: Redis, options: RedisStreamBridgeOptions) {
    this.maxlen = Math.max(1, options.queueMaxsize);
    this.ttlSeconds = options.ttlSeconds > 0 ? Math.ceil(options.ttlSeconds) : 0;
    this.clean = options.clean;
    if (!(cmd as unknown as Record<string, unknown>).deerflowStreamAppend) {
      cmd.defineCommand("deerflowStreamAppend", { numberOfKeys: 1, lua: APPEND_SCRIPT });
    }
    const command = (cmd as unknown as { deerflowStreamAppend: AppendCommand }).deerflowStreamAppend;
    this.append = (key, ...args) => command.call(cmd, key, ...args);
  }

  /** Batch a writer's events: one send per writer per event-loop turn, in publish order. */
  schedule(w: RedisRunWriter): void {
    this.dirty.add(w);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.sendAll);
    }
  }

  /** The run ended (or failed): later subscribers read Redis. */
  forget(w: RedisRunWriter): void {
    if (this.local.get(w.runId) === w) this.local.delete(w.runId);
  }

  /** Send everything pending now (close). */
  drain(): void {
    this.sendAll();
  }
}

/**
 * The Redis stream bridge: one stream per run (`{prefix}:{run_id}`),
 * capped at `queue_maxsize` with MAXLEN, expiring `stream_ttl_seconds`
 * after its last append. The writer assigns the ids, so `publish` returns
 * the id at once and this process's subscribers get the event synchronously
 * from a local window; Redis gets the events in order, batched per
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
    async writer(runId: string, opts?: { resume?: boolean }): Promise<RunStreamWriter> {
      if (closed) throw new StreamBridgeError("The Redis stream bridge is closed.", { code: "stream_bridge_closed" });
      const key = keyOf(runId);
      let stream: RunStream;
      let top: string | undefined;
      if (opts?.resume) {
        // A takeover: go on after the last stored entry, and keep the retained ones for this process's subscribers.
        let raw: RawEntry[];
        try {
          raw = (await cmd.xrange(key, "-", "+")) as RawEntry[];
        } catch (err) {
          throw unavailable("resuming the stream of", runId, err);
        }
        const entries = raw.map(decodeEntry).filter((e) => e !== undefined);
        stream = new RunStream(runId, core.maxlen, Number.POSITIVE_INFINITY, entries.at(-1)?.at);
        for (const e of entries) if (e.item) stream.push(e.item);
        top = raw.at(-1)?.[0];
      } else {
        stream = new RunStream(runId, core.maxlen, Number.POSITIVE_INFINITY);
      }
      const w = new RedisRunWriter(core, runId, key, stream, top);
      core.local.set(runId, w);
      return w;
    },
    subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
      if (closed) throw new StreamBridgeError("The Redis stream bridge is closed.", { code: "stream_bridge_closed" });
      const local = core.local.get(runId);
      if (local) return local.stream.listen(lastEventId, listener);
      return reader.subscribe(runId, lastEventId, listener);
    },
    async has(runId: string): Promise<boolean> {
      if (core.local.get(runId)?.stream.hasEntries) return true;
      try {
        return (await cmd.exists(keyOf(runId))) > 0;
      } catch (err) {
        throw unavailable("looking up the stream of", runId, err);
      }
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      core.drain();
      const flushes = [...core.local.values()].map((w) => w.flush().catch(() => {}));
      await Promise.all(flushes);
      await reader.close();
    },
  };
}
