import type { RunStreamWriter, StreamBridge, StreamListener } from "../backend-types";
import { StreamBridgeError } from "../../errors";
import { RunStream } from "./run-stream";

/** Options of {@link createMemoryStreamBridge} (`stream_bridge:` with `type: memory`). */
export interface MemoryStreamBridgeOptions {
  /** Events retained per run for replay (`queue_maxsize`). */
  queueMaxsize: number;
  /** A run's stream is dropped this long after its last append (`stream_ttl_seconds`; 0 or less: kept until the process exits). */
  ttlSeconds: number;
  /** Epoch ms; tests pass a clock they advance. */
  clock?: () => number;
}

/** How often (clock ms) writer()/has() look for expired streams of other runs. */
const SWEEP_EVERY_MS = 1000;

/**
 * The in-process stream bridge: one capped window of events per run, push
 * listeners called synchronously (no promise per event), `publish` returns
 * the event id at once. Runs are shared only inside this process.
 */
export function createMemoryStreamBridge(options: MemoryStreamBridgeOptions): StreamBridge & {
  /** Milliseconds until the run's stream expires (`undefined`: no such stream). For tests and diagnostics. */
  remainingTtlMs(runId: string): number | undefined;
} {
  const clock = options.clock ?? Date.now;
  const ttlMs = options.ttlSeconds > 0 ? options.ttlSeconds * 1000 : Number.POSITIVE_INFINITY;
  const streams = new Map<string, RunStream>();
  let lastSweep = 0;
  let closed = false;

  function sweep(now: number): void {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    for (const [runId, s] of streams) if (s.expired(now)) streams.delete(runId);
  }

  /** The run's live stream (an expired one is dropped first). */
  function live(runId: string, now: number): RunStream | undefined {
    const s = streams.get(runId);
    if (s?.expired(now)) {
      streams.delete(runId);
      return undefined;
    }
    return s;
  }

  function streamFor(runId: string, now: number): RunStream {
    let s = live(runId, now);
    if (!s) {
      s = new RunStream(runId, options.queueMaxsize, now + ttlMs);
      streams.set(runId, s);
    }
    return s;
  }

  const done = Promise.resolve();

  return {
    kind: "memory",
    async writer(runId: string): Promise<RunStreamWriter> {
      const now = clock();
      sweep(now);
      // In one process a resumed writer is the same stream: its ids go on after the retained ones either way.
      const stream = streamFor(runId, now);
      stream.writing = !stream.isEnded;
      return {
        publish(event: string, data: unknown): string {
          const t = clock();
          if (stream.isEnded) return stream.ids.next(t).id;
          stream.expiresAt = t + ttlMs;
          return stream.append(event, data, t).id;
        },
        end(): Promise<void> {
          stream.expiresAt = clock() + ttlMs;
          stream.writing = false;
          stream.end();
          return done;
        },
        flush(): Promise<void> {
          return done;
        },
        abandon(message: string): void {
          // Everything published is already held here: the error carries the last event's id.
          stream.writing = false;
          stream.fail(message);
        },
        durableWait(waiting: boolean): void {
          if (waiting) stream.hold();
          else stream.release();
        },
      };
    },
    subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
      if (closed) throw new StreamBridgeError("The memory stream bridge is closed; no new subscriptions.", { code: "stream_bridge_closed" });
      return streamFor(runId, clock()).listen(lastEventId, listener);
    },
    async has(runId: string): Promise<boolean> {
      const now = clock();
      sweep(now);
      return live(runId, now)?.hasEntries ?? false;
    },
    remainingTtlMs(runId: string): number | undefined {
      const now = clock();
      const s = live(runId, now);
      return s?.hasEntries ? s.expiresAt - now : undefined;
    },
    async close(): Promise<void> {
      closed = true;
      streams.clear();
    },
  };
}
