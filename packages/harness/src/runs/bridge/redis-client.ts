import type { Redis } from "ioredis";
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

/** What a command in flight on a connection that closed is rejected with (the driver's text names its option). */
const CONNECTION_LOST = "the connection to Redis was lost while the command was in flight";

/** The message of a driver error, in this bridge's words where the driver's name its own options. */
function messageOf(err: unknown): string {
  if (err instanceof Error) return err.name === "MaxRetriesPerRequestError" ? CONNECTION_LOST : err.message;
  return String(err);
}

/**
 * Open one connection. Commands fail at once while Redis is unreachable
 * (no offline queue), and so do the commands in flight when a connection
 * closes (no retry, no resend): a run whose writes fail is failed by its
 * owner instead of waiting, and the shared reader's subscribers are told.
 * Once connected, reconnects go on with a capped backoff, so the process
 * uses Redis again as soon as it is back; the first connection is not
 * retried, so a wrong password, a TLS mismatch or a wrong port fails the
 * start at once with the driver's reason. Connection errors are logged once
 * per outage, masked.
 */
export async function openRedisLink(url: string, role: string, log: (message: string) => void): Promise<RedisLink> {
  const masked = maskUrl(url);
  const clean = (err: unknown) => maskCredentials(messageOf(err), url);
  /** True once the first connection is up: only then are drops retried. */
  let connected = false;
  let down = false;
  let firstError: string | undefined;
  // ioredis is loaded by the first Redis link: only configs with a Redis stream bridge or run transport use it
  const { Redis } = await import("ioredis");
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    // 0, not 1: the driver rejects the commands in flight at a close only once the retries are used up. With one
    // retry they wait for the next connection attempt, and when that one succeeds (a dropped connection to a Redis
    // that stayed up) they are dropped without an answer: a blocked XREAD that never settles stalls every
    // subscription of the process, an append that never settles its run's flush.
    maxRetriesPerRequest: 0,
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
  // A connection the server closed without a socket error (a killed client, an idle timeout, a shutdown) reconnects
  // too: said once, and a failing reconnect still logs its error.
  let closed = false;
  client.on("reconnecting", () => {
    if (!connected || down || closed) return;
    closed = true;
    log(`Redis at ${masked} (${role} connection) was closed; reconnecting.`);
  });
  client.on("ready", () => {
    if (!down && !closed) return;
    down = false;
    closed = false;
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
