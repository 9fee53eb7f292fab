import type { Redis } from "ioredis";
import type { StreamItem, StreamListener } from "../backend-types";
import { compareEventIds, formatEventId, parseEventId } from "./event-id";
import type { EventId } from "./event-id";
import { decodeEntry } from "./redis-entries";
import type { DecodedEntry, RawEntry } from "./redis-entries";
import { bridgeErrorItem, END_ITEM, gapItem } from "./run-stream";
import type { StreamEventItem } from "./run-stream";

/** Entries one blocking read takes per stream. */
const READ_COUNT = 128;
/** A blocking read returns after this long with nothing (ms), so a lost wake-up costs at most this. */
const BLOCK_MS = 5000;
/** Attempts to wake the blocked reader when the wake-up overtook its read (bounded). */
const UNBLOCK_ATTEMPTS = 50;

/** One subscriber of a run this process does not write. */
interface RemoteSubscriber {
  listener: StreamListener;
  /** The last entry it has (requested or delivered); undefined: from the oldest retained. */
  last: EventId | undefined;
  /** Replaying through XRANGE: entries the reader brings meanwhile wait here. */
  buffered: DecodedEntry[] | undefined;
  stopped: boolean;
}

/** The runs being tailed: one per run, whatever its number of subscribers. */
interface Tail {
  runId: string;
  key: string;
  subs: Set<RemoteSubscriber>;
  /** Where the shared reader goes on from; undefined until a first replay told it. */
  cursor: string | undefined;
}

/**
 * Subscriptions to runs written by other processes: each replays the
 * retained window with one XRANGE, then follows live entries through ONE
 * blocking XREAD per process on its own connection, over every tailed run
 * at once. A new run joins the read by waking it with CLIENT UNBLOCK.
 *
 * Gaps come from the numbers: seqs have no holes, so an entry whose seq is
 * beyond the next one means the entries between were trimmed. When Redis
 * fails, every subscriber gets an `error` event and `end`; later
 * subscriptions try Redis again.
 */
export class RedisStreamReader {
  private readonly tails = new Map<string, Tail>();
  private idle: (() => void) | undefined;
  private readerId: number | undefined;
  /** Increments with each blocking read; a wake-up targets the read it saw. */
  private readGeneration = 0;
  private blocking = false;
  private waking = false;
  private closed = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly cmd: Redis,
    private readonly reader: Redis,
    private readonly keyOf: (runId: string) => string,
    private readonly clean: (err: unknown) => string,
  ) {
    this.loop = this.run();
  }

  subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
    const key = this.keyOf(runId);
    const requested = parseEventId(lastEventId);
    const sub: RemoteSubscriber = { listener, last: requested, buffered: [], stopped: false };
    let tail = this.tails.get(key);
    if (!tail) {
      tail = { runId, key, subs: new Set(), cursor: undefined };
      this.tails.set(key, tail);
    }
    tail.subs.add(sub);
    const stop = () => this.detach(sub, key);
    this.cmd.xrange(key, "-", "+").then(
      (entries) => this.replayed(runId, tail!, sub, lastEventId, requested, entries as RawEntry[]),
      (err: unknown) => this.fail(sub, key, `Redis stream bridge: cannot read run ${runId}: ${this.clean(err)}`),
    );
    return stop;
  }

  private replayed(runId: string, tail: Tail, sub: RemoteSubscriber, lastEventId: string | null, requested: EventId | undefined, raw: RawEntry[]): void {
    if (sub.stopped) return;
    const entries: DecodedEntry[] = [];
    for (const r of raw) {
      const e = decodeEntry(r);
      if (e) entries.push(e);
    }
    const events = entries.filter((e) => e.item);
    if (requested && events.length && requested.seq + 1 < events[0].at.seq && compareEventIds(requested, events[0].at) < 0) {
      this.finish(sub, tail.key, gapItem(runId, lastEventId, events[0].item!.id, events[events.length - 1].item!.id));
      return;
    }
    for (const e of entries) if (!this.deliver(runId, sub, e, tail.key)) return;
    const buffered = sub.buffered ?? [];
    sub.buffered = undefined;
    for (const e of buffered) if (!this.deliver(runId, sub, e, tail.key)) return;
    if (tail.cursor === undefined) {
      tail.cursor = raw.length ? raw[raw.length - 1][0] : "0-0";
      this.wake();
    }
  }

  /** Give one entry to a subscriber in order (older ones skipped, a hole is a gap). False when the subscription ended. */
  private deliver(runId: string, sub: RemoteSubscriber, e: DecodedEntry, key: string): boolean {
    if (sub.stopped) return false;
    if (sub.buffered) {
      sub.buffered.push(e);
      return true;
    }
    if (sub.last && compareEventIds(e.at, sub.last) <= 0) return true;
    if (!e.item) {
      this.finish(sub, key, END_ITEM);
      return false;
    }
    if (sub.last && e.at.seq > sub.last.seq + 1) {
      // The reader fell more than a window behind this run's writer.
      const requested = formatEventId(sub.last.epochMs, sub.last.seq);
      this.finish(sub, key, gapItem(runId, requested, e.item.id, e.item.id));
      return false;
    }
    sub.last = e.at;
    try {
      sub.listener(e.item);
    } catch {
      // the subscriber's own failure; its owner stops it
    }
    return true;
  }

  private finish(sub: RemoteSubscriber, key: string, item: StreamItem): void {
    this.detach(sub, key);
    try {
      sub.listener(item);
    } catch {
      // the subscriber's own failure
    }
  }

  private fail(sub: RemoteSubscriber, key: string, message: string): void {
    if (sub.stopped) return;
    const at = sub.last ? formatEventId(sub.last.epochMs, sub.last.seq) : "0-0";
    this.detach(sub, key);
    const item: StreamEventItem = bridgeErrorItem(at, message);
    try {
      sub.listener(item);
      sub.listener(END_ITEM);
    } catch {
      // the subscriber's own failure
    }
  }

  private detach(sub: RemoteSubscriber, key: string): void {
    if (sub.stopped) return;
    sub.stopped = true;
    const tail = this.tails.get(key);
    if (!tail) return;
    tail.subs.delete(sub);
    // An idle run stays in the current read until it returns; the next read leaves it out.
    if (tail.subs.size === 0) this.tails.delete(key);
  }

  /** Make the reader (re)start its read with the current set of runs. */
  private wake(): void {
    if (this.idle) {
      const resume = this.idle;
      this.idle = undefined;
      resume();
      return;
    }
    if (!this.blocking || this.waking || this.readerId === undefined) return;
    this.waking = true;
    const generation = this.readGeneration;
    const id = this.readerId;
    let attempts = 0;
    const attempt = () => {
      this.cmd.client("UNBLOCK", id).then(
        (n) => {
          // 0: the read had not reached Redis yet (the wake-up overtook it) — try again shortly.
          if (Number(n) === 0 && this.blocking && this.readGeneration === generation && ++attempts < UNBLOCK_ATTEMPTS) setTimeout(attempt, 2);
          else this.waking = false;
        },
        () => {
          this.waking = false;
        },
      );
    };
    attempt();
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const active = [...this.tails.values()].filter((t) => t.cursor !== undefined && t.subs.size > 0);
      if (!active.length) {
        await new Promise<void>((resolve) => (this.idle = resolve));
        continue;
      }
      let reply: unknown;
      try {
        if (this.readerId === undefined) this.readerId = Number(await this.reader.client("ID"));
        this.readGeneration++;
        this.blocking = true;
        const args: (string | number)[] = ["COUNT", READ_COUNT, "BLOCK", BLOCK_MS, "STREAMS"];
        for (const t of active) args.push(t.key);
        for (const t of active) args.push(t.cursor!);
        reply = await (this.reader.xread as (...a: (string | number)[]) => Promise<unknown>)(...args);
      } catch (err) {
        this.blocking = false;
        this.readerId = undefined;
        if (this.closed) return;
        this.failAll(`Redis stream bridge: reading live events failed: ${this.clean(err)}`);
        continue;
      }
      this.blocking = false;
      if (!reply) continue;
      for (const [key, raw] of reply as [string, RawEntry[]][]) {
        const tail = this.tails.get(key);
        if (!raw.length) continue;
        if (tail) tail.cursor = raw[raw.length - 1][0];
        if (!tail) continue;
        const subs = [...tail.subs];
        for (const r of raw) {
          const e = decodeEntry(r);
          if (!e) continue;
          for (const sub of subs) this.deliver(tail.runId, sub, e, key);
        }
      }
    }
  }

  private failAll(message: string): void {
    const tails = [...this.tails.values()];
    this.tails.clear();
    for (const t of tails) for (const sub of t.subs) this.fail(sub, t.key, message);
  }

  /** True when some subscription of another process's run is open (for tests and diagnostics). */
  get tailed(): number {
    return this.tails.size;
  }

  /** Stop reading (the blocked read is cut by closing its connection); open subscriptions get nothing more. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle?.();
    this.idle = undefined;
    const tails = [...this.tails.values()];
    this.tails.clear();
    for (const t of tails) for (const sub of t.subs) sub.stopped = true;
    this.reader.disconnect();
    await this.loop.catch(() => {});
  }
}
