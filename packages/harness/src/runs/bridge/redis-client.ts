import { Redis } from "ioredis";
import { ConfigError, StreamBridgeError } from "../../errors";
import { maskCredentials, maskUrl } from "../../postgres";

/** The config key the Redis URL comes from (named in every error). */
export const REDIS_URL_KEY = "stream_bridge.redis_url";

/** Longest wait between two reconnect attempts (ms): a Redis back from an outage is used again within this. */
const MAX_RECONNECT_DELAY_MS = 2000;

/** A Redis connection of the run transport, with what its messages need. */
export interface RedisLink {
  client: Redis;
  /** The URL with its password masked. */
  masked: string;
  /** An error message with the URL and password masked. */
  clean(err: unknown): string;
}

/** Check the URL's shape before connecting (a clear message naming the key, not a driver error). */
export function checkRedisUrl(url: string): void {
  let scheme = "";
  try {
    scheme = new URL(url).protocol;
  } catch {
    // handled below
  }
  if (scheme !== "redis:" && scheme !== "rediss:") {
    throw new ConfigError(`${REDIS_URL_KEY} must be a redis:// or rediss:// URL, got '${maskUrl(url)}'.`, {
      details: { key: REDIS_URL_KEY },
    });
  }
}

/**
 * Open one connection. Commands fail at once while Redis is unreachable
 * (no offline queue, one retry): a run whose writes fail is failed by its
 * owner instead of waiting. Reconnects go on with a capped backoff, so the
 * process uses Redis again as soon as it is back. Connection errors are
 * logged once per outage, masked.
 */
export async function openRedisLink(url: string, role: string, log: (message: string) => void): Promise<RedisLink> {
  const masked = maskUrl(url);
  const clean = (err: unknown) => maskCredentials(err instanceof Error ? err.message : String(err), url);
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    connectionName: `deerflow-${role}`,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
  });
  let down = false;
  client.on("error", (err: unknown) => {
    if (down) return;
    down = true;
    log(`Redis at ${masked} (${role} connection) failed: ${clean(err)}; reconnecting.`);
  });
  client.on("ready", () => {
    if (!down) return;
    down = false;
    log(`Redis at ${masked} (${role} connection) is reachable again.`);
  });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw new StreamBridgeError(`Cannot connect to Redis at ${masked} (${REDIS_URL_KEY}): ${clean(err)}`, {
      code: "stream_bridge_unavailable",
      details: { key: REDIS_URL_KEY, url: masked },
    });
  }
  return { client, masked, clean };
}
