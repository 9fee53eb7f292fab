import type { Redis } from "ioredis";
import type { StreamListener } from "../backend-types";
import { decodeEntry } from "./redis-entries";
import type { RawEntry } from "./redis-entries";
import { RemoteSubscription } from "./remote-subscription";
import type { StoredEntry } from "./remote-subscription";

/** Entries one blocking read takes per stream. */
const READ_COUNT = 128;
/** A blocking read returns after this long with nothing (ms), so a lost wake-up costs at most this. */
export const DEFAULT_BLOCK_MS = 5000;

/** The runs being tailed: one per run, whatever its number of subscribers. */
interface Tail {
  runId: string;
  key: string;
  subs: Set<RemoteSubscription>;
  /** Where the shared reader goes on from; undefined until a first replay told it. */
  cursor: string | undefined;
}

function decodeAll(raw: RawEntry[]): StoredEntry[] {
  const out: StoredEntry[] = [];
  for (const r of raw) {
    const e = decodeEntry(r);
    if (e) out.push(e);
  }
  return out;
}

/**
 * Subscriptions to runs written by other processes: each replays the
 * retained window with one XRANGE, then follows live entries through ONE
 * blocking XREAD per process on its own connection, over every tailed run
 * at once. A new run joins the read by waking it with CLIENT UNBLOCK.
 * When Redis fails, every subscriber gets an `error` event and `end`;
 * later subscriptions try Redis again.
 */
export class RedisStreamReader {
  private readonly tails = new Map<string, Tail>();
  private idle: (() => void) | undefined;
  private readerId: number | undefined;
  /** Increments with each blocking read; a wake-up targets the read it saw. */
  private readGeneration = 0;
  private blocking = false;
  /** The read a wake-up was sent for (one per read is enough). */
  private wokenGeneration = -1;
  private closed = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly cmd: Redis,
    private readonly reader: Redis,
    private readonly keyOf: (runId: string) => string,
    private readonly clean: (err: unknown) => string,
    private readonly blockMs = DEFAULT_BLOCK_MS,
  ) {
    this.loop = this.run();
  }

  subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
    const key = this.keyOf(runId);
    let tail = this.tails.get(key);
    if (!tail) {
      tail = { runId, key, subs: new Set(), cursor: undefined };
      this.tails.set(key, tail);
    }
    const t = tail;
    const sub = new RemoteSubscription(runId, lastEventId, listener, () => {
      t.subs.delete(sub);
      // An idle run stays in the current read until it returns; the next read leaves it out.
      if (t.subs.size === 0 && this.tails.get(key) === t) this.tails.delete(key);
    });
    t.subs.add(sub);
    this.cmd.xrange(key, "-", "+").then(
      (raw) => {
        const entries = raw as RawEntry[];
        if (!sub.replay(decodeAll(entries))) return;
        if (t.cursor === undefined) {
          t.cursor = entries.length ? entries[entries.length - 1][0] : "0-0";
          this.wake();
        }
      },
      (err: unknown) => sub.fail(`Redis stream bridge: cannot read run ${runId}: ${this.clean(err)}`),
    );
    return () => sub.stop();
  }

  /** Make the reader (re)start its read with the current set of runs. */
  private wake(): void {
    if (this.idle) {
      const resume = this.idle;
      this.idle = undefined;
      resume();
      return;
    }
    // Not blocked: the loop builds its next read from the current runs anyway.
    if (!this.blocking || this.readerId === undefined || this.wokenGeneration === this.readGeneration) return;
    const generation = this.readGeneration;
    this.wokenGeneration = generation;
    const id = this.readerId;
    let attempts = 0;
    const attempt = () => {
      if (!this.blocking || this.readGeneration !== generation || this.closed) return;
      this.cmd.client("UNBLOCK", id).then(
        (n) => {
          // 0: the read had not reached Redis yet (the wake-up overtook it). Try again until that read is over;
          // it ends by itself after blockMs at the latest.
          if (Number(n) === 0) setTimeout(attempt, Math.min(2 * ++attempts, 50));
        },
        () => {
          // Redis is failing: the blocked read fails too, and the loop reports it.
        },
      );
    };
    attempt();
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      if (![...this.tails.values()].some((t) => t.cursor !== undefined && t.subs.size > 0)) {
        await new Promise<void>((resolve) => (this.idle = resolve));
        continue;
      }
      let reply: unknown;
      let reading: Map<string, Tail>;
      try {
        if (this.readerId === undefined) {
          this.readerId = Number(await this.reader.client("ID"));
          continue; // runs may have joined meanwhile: build the read afresh
        }
        // Built and sent in one go, so a run that joins later always finds the read blocked (and wakes it).
        reading = new Map();
        for (const t of this.tails.values()) if (t.cursor !== undefined && t.subs.size > 0) reading.set(t.key, t);
        const args: (string | number)[] = ["COUNT", READ_COUNT, "BLOCK", this.blockMs, "STREAMS"];
        for (const t of reading.values()) args.push(t.key);
        for (const t of reading.values()) args.push(t.cursor!);
        this.readGeneration++;
        this.blocking = true;
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
        // Only the tail this read was for: one recreated meanwhile has its own replay and cursor.
        const tail = reading.get(key);
        if (!tail || !raw.length || this.tails.get(key) !== tail) continue;
        tail.cursor = raw[raw.length - 1][0];
        const subs = [...tail.subs];
        for (const e of decodeAll(raw)) for (const sub of subs) sub.take(e);
      }
    }
  }

  private failAll(message: string): void {
    const tails = [...this.tails.values()];
    this.tails.clear();
    for (const t of tails) for (const sub of [...t.subs]) sub.fail(message);
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
    for (const t of tails) for (const sub of [...t.subs]) sub.stop();
    this.reader.disconnect();
    await this.loop.catch(() => {});
  }
}
