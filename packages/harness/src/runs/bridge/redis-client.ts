import { Redis } from "ioredis";
import { ConfigError, StreamBridgeError } from "../../errors";
import { maskCredentials, maskUrl } from "../../postgres";

/** The config key the Redis URL comes from (named in every error). */
export const REDIS_URL_KEY = "stream_bridge.redis_url";

/** Longest a connection attempt may take (ms): a port that accepts but never answers (e.g. TLS spoken to a plaintext Redis) fails the start within this. */
const CONNECT_TIMEOUT_MS = 5000;

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
 * Why a first connection failed, in words that say what to fix: the
 * driver's own error (a refused password, a refused TLS handshake) rather
 * than the "Connection is closed." it rejects `connect()` with.
 */
function firstConnectFailure(url: string, cause: string | undefined, clean: (err: unknown) => string): string {
  const tls = url.startsWith("rediss:");
  const reason = cause ?? "the connection closed before Redis answered";
  if (tls && !/WRONGPASS|NOAUTH|NOPERM/.test(reason)) {
    // rediss:// is never downgraded: a server that does not speak TLS (or presents a certificate that does not verify) is an error.
    return `${clean(reason)}. The URL is rediss:// (TLS) and no TLS session could be set up; check that Redis has TLS enabled on that port and that its certificate is trusted (redis:// connects without TLS)`;
  }
  return clean(reason);
}

/**
 * Open one connection. Commands fail at once while Redis is unreachable
 * (no offline queue, one retry): a run whose writes fail is failed by its
 * owner instead of waiting. Once connected, reconnects go on with a capped
 * backoff, so the process uses Redis again as soon as it is back; the first
 * connection is not retried, so a wrong password, a TLS mismatch or a wrong
 * port fails the start at once with the driver's reason. Connection errors
 * are logged once per outage, masked.
 */
export async function openRedisLink(url: string, role: string, log: (message: string) => void): Promise<RedisLink> {
  const masked = maskUrl(url);
  const clean = (err: unknown) => maskCredentials(err instanceof Error ? err.message : String(err), url);
  /** True once the first connection is up: only then are drops retried. */
  let connected = false;
  let down = false;
  let firstError: string | undefined;
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    autoResendUnfulfilledCommands: false,
    connectionName: `deerflow-${role}`,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => (connected ? Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS) : null),
  });
  client.on("error", (err: unknown) => {
    if (!connected) {
      firstError ??= err instanceof Error ? err.message : String(err);
      return;
    }
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
    connected = true;
  } catch (err) {
    client.disconnect();
    const cause = firstError ?? (err instanceof Error ? err.message : String(err));
    throw new StreamBridgeError(`Cannot connect to Redis at ${masked} (${REDIS_URL_KEY}): ${firstConnectFailure(url, cause, clean)}`, {
      code: "stream_bridge_unavailable",
      details: { key: REDIS_URL_KEY, url: masked },
    });
  }
  return { client, masked, clean };
}
