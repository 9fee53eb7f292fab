import type { RunSignals, StreamBridge } from "../backend-types";
import { checkRedisUrl, openRedisLink } from "./redis-client";
import type { RedisLink } from "./redis-client";
import { createRedisStreamBridge } from "./redis-bridge";
import { createRedisRunSignals } from "./redis-signals";

/** Options of {@link openRedisRunTransport} (`stream_bridge:` with `type: redis`). */
export interface RedisRunTransportOptions {
  /** `stream_bridge.redis_url` (or `DEER_FLOW_STREAM_BRIDGE_REDIS_URL`). */
  url: string;
  /** `stream_bridge.queue_maxsize`: events kept per run stream (MAXLEN). */
  queueMaxsize: number;
  /** `stream_bridge.stream_ttl_seconds`: a run's stream expires this long after its last append (0: never). */
  ttlSeconds: number;
  /** Connection failures and recoveries (credentials masked). */
  log: (message: string) => void;
  /** Key prefix of the run streams (default `deerflow:stream_bridge`). */
  keyPrefix?: string;
  /** Pub/sub channel of run signals (default `deerflow:run_signals`). */
  signalsChannel?: string;
  /** Longest the shared blocking read waits with nothing to read (ms; default 5000); a run that joins wakes it at once. */
  readerBlockMs?: number;
  /** After how long without an acknowledged append a writer delivers locally only what Redis took (ms; default 1000). */
  inDoubtAfterMs?: number;
  /** The clock of that check (tests). */
  clock?: () => number;
}

/** A process's Redis bridge and signals, on three connections (commands, the blocking reader, pub/sub). */
export interface RedisRunTransport {
  bridge: StreamBridge & { keyOf(runId: string): string };
  signals: RunSignals;
  close(): Promise<void>;
}

/**
 * Connect to Redis and open the stream bridge and the run signals on it.
 * Fails with a `ConfigError` for a malformed URL and a `StreamBridgeError`
 * (`stream_bridge_unavailable`) when Redis does not answer; once open, an
 * outage fails the affected runs' writes and subscriptions and the
 * connections keep reconnecting.
 */
export async function openRedisRunTransport(options: RedisRunTransportOptions): Promise<RedisRunTransport> {
  checkRedisUrl(options.url);
  const links: RedisLink[] = [];
  try {
    for (const role of ["commands", "stream-reader", "signals"]) links.push(await openRedisLink(options.url, role, options.log));
  } catch (err) {
    for (const l of links) l.client.disconnect();
    throw err;
  }
  const [cmd, reader, sub] = links;
  const bridge = createRedisStreamBridge({
    cmd: cmd.client,
    reader: reader.client,
    queueMaxsize: options.queueMaxsize,
    ttlSeconds: options.ttlSeconds,
    keyPrefix: options.keyPrefix,
    readerBlockMs: options.readerBlockMs,
    inDoubtAfterMs: options.inDoubtAfterMs,
    clock: options.clock,
    clean: cmd.clean,
  });
  let signals: RunSignals;
  try {
    signals = await createRedisRunSignals({ cmd: cmd.client, sub: sub.client, channel: options.signalsChannel, clean: cmd.clean, log: options.log });
  } catch (err) {
    await bridge.close();
    for (const l of links) l.client.disconnect();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    bridge,
    signals,
    close() {
      closing ??= (async () => {
        await bridge.close();
        await signals.close();
        for (const l of links) {
          // QUIT lets pending replies arrive; a connection that is down is just dropped.
          await l.client.quit().catch(() => l.client.disconnect());
          l.client.disconnect();
        }
      })();
      return closing;
    },
  };
}
