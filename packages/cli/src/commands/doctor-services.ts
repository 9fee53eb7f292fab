/**
 * `deerflow doctor` for the shared run backends: PostgreSQL when
 * `database.backend: postgres` (it connects, reads the server version and
 * which migrations ran) and Redis when `stream_bridge.type: redis` (PING and
 * the server version). Every URL shown has its password masked.
 */
import { Redis } from "ioredis";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { maskCredentials, maskUrl } from "@deerflow-ts/harness/postgres";
import { peekPostgres } from "../postgres-peek";
import type { PostgresPeek } from "../postgres-peek";
import type { Finding } from "./doctor";

/** The Redis URL the stream bridge would use: `stream_bridge.redis_url`, else `DEER_FLOW_STREAM_BRIDGE_REDIS_URL`. */
export function bridgeRedisUrl(config: AppConfig, env: Record<string, string | undefined>): string | undefined {
  return config.stream_bridge?.redis_url ?? env.DEER_FLOW_STREAM_BRIDGE_REDIS_URL ?? undefined;
}

/** PostgreSQL and Redis findings for `config` (none when neither is configured). */
export async function serviceFindings(config: AppConfig, env: Record<string, string | undefined>, timeoutMs: number): Promise<Finding[]> {
  const out: Finding[] = [];
  if (config.database?.backend === "postgres") out.push(...(await postgresFindings(config)));
  if (config.stream_bridge?.type === "redis") out.push(...(await redisFindings(bridgeRedisUrl(config, env), timeoutMs)));
  return out;
}

async function postgresFindings(config: AppConfig): Promise<Finding[]> {
  const url = config.database?.postgres_url ?? undefined;
  if (!url) {
    return [
      {
        check: "postgres",
        level: "error",
        message: "database.backend is 'postgres' but database.postgres_url is not set",
        fix: "Set `database.postgres_url: $DATABASE_URL` in config.yaml and DATABASE_URL=postgres://user:password@host:5432/db in .env.",
      },
    ];
  }
  const masked = maskUrl(url);
  let peek: PostgresPeek | undefined;
  try {
    // Read-only: the doctor creates neither the schema nor a table (the pool's own connect timeout bounds this).
    peek = await peekPostgres(config.database ?? {});
    const { pool } = peek;
    const version = (await pool.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version.split(" ")[0] ?? "?";
    const out: Finding[] = [{ check: "postgres", level: "ok", message: `connected to PostgreSQL ${version} at ${masked}` }];
    if (!(await peek.hasTable("deerflow_migrations"))) {
      out.push({ check: "postgres", level: "ok", message: "no migrations applied yet: `deerflow serve` creates the tables on its first start" });
      return out;
    }
    const rows = await pool.query<{ component: string; version: number; count: string }>(
      `SELECT component, max(version) AS version, count(*) AS count FROM ${peek.name("deerflow_migrations")} GROUP BY component ORDER BY component`,
    );
    const parts = rows.rows.map((r) => `${r.component} v${r.version}`);
    out.push({ check: "postgres", level: "ok", message: `migrations: ${parts.join(", ") || "none"}` });
    return out;
  } catch (err) {
    return [
      {
        check: "postgres",
        level: "error",
        message: maskCredentials((err as Error).message, url),
        fix: "Check that PostgreSQL runs and accepts connections there, and the user, password and database name in database.postgres_url (the URL is shown with its password masked).",
      },
    ];
  } finally {
    await peek?.close();
  }
}

async function redisFindings(url: string | undefined, timeoutMs: number): Promise<Finding[]> {
  if (!url) {
    return [
      {
        check: "redis",
        level: "error",
        message: "stream_bridge.type is 'redis' but neither stream_bridge.redis_url nor DEER_FLOW_STREAM_BRIDGE_REDIS_URL is set",
        fix: "Set `stream_bridge.redis_url: $REDIS_URL` in config.yaml and REDIS_URL=redis://host:6379/0 in .env.",
      },
    ];
  }
  const masked = maskUrl(url);
  if (!/^rediss?:\/\//i.test(url)) {
    return [{ check: "redis", level: "error", message: `stream_bridge.redis_url must be a redis:// or rediss:// URL, got '${masked}'`, fix: "Write it as redis://[:password@]host:6379/0." }];
  }
  // one attempt, no reconnect loop: the doctor reports, it does not wait for Redis to come back
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // ioredis rejects a refused AUTH/HELLO only with "Connection is closed."; Redis's own answer
  // (WRONGPASS, NOAUTH) arrives as an error event, and that is the one that says what to fix
  let answered: Error | undefined;
  client.on("error", (err: Error) => {
    answered = err;
  });
  try {
    await withTimeout(client.connect(), timeoutMs, `no answer from Redis at ${masked} within ${timeoutMs / 1000} s`);
    const pong = await client.ping();
    const info = await client.info("server");
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
    return [{ check: "redis", level: "ok", message: `Redis ${version} at ${masked} answered ${pong}` }];
  } catch (err) {
    return [
      {
        check: "redis",
        level: "error",
        message: `cannot use Redis at ${masked}: ${maskCredentials(((err as Error).message === "Connection is closed." && answered ? answered : (err as Error)).message, url)}`,
        fix: "Check that Redis runs and accepts connections there, and the password in stream_bridge.redis_url (the URL is shown with its password masked).",
      },
    ];
  } finally {
    client.disconnect();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
