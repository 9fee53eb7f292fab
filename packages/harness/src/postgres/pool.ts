import type pg from "pg";
import { z } from "zod";
import { ConfigError } from "../errors";

/**
 * A schema name we can put in `search_path` and DDL unquoted: lower case
 * only (DeerFlow's rule), because PostgreSQL folds an unquoted name to lower
 * case and a mixed-case one would silently miss its tables.
 */
const schemaName = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a plain lower-case PostgreSQL identifier (a-z, 0-9, _; not starting with a digit; at most 63 characters)");

/**
 * `url` as node-postgres takes it: DeerFlow's configs may name a SQLAlchemy
 * driver (`postgresql+asyncpg://`), which is dropped.
 */
export function normalizePgUrl(url: string): string {
  return url.trim().replace(/^(postgres(?:ql)?)\+[a-z0-9_]+:\/\//i, "$1://");
}

/** What {@link openPgPool} needs. */
export interface PgPoolOptions {
  /** `postgres://user:password@host:port/db` (the password never appears in a message). */
  url: string;
  /** Schema holding the tables; created when missing and put first in every connection's `search_path`. */
  schema?: string | null;
  /** Maximum connections of the pool (default 10). */
  max?: number;
  /** Where idle-connection failures are reported (already masked). */
  log: (message: string) => void;
  /** The config key named in errors (default `database.postgres_url`). */
  configKey?: string;
  /**
   * Server-side limit of one statement in ms (`statement_timeout`; default none):
   * a stuck query fails its caller instead of holding a connection forever.
   */
  statementTimeoutMs?: number | null;
}

/**
 * `url` with its password replaced by `***` (user, host, port and database
 * stay visible so an operator can tell which server was meant).
 */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    for (const key of [...u.searchParams.keys()]) if (/pass|secret|token/i.test(key)) u.searchParams.set(key, "***");
    return u.toString();
  } catch {
    // Not a URL the parser accepts: still hide whatever sits between `user:` and `@`.
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, "$1***@");
  }
}

/** The password of `url`, decoded, when it has one. */
function passwordOf(url: string): string | undefined {
  try {
    const p = new URL(url).password;
    return p ? decodeURIComponent(p) : undefined;
  } catch {
    return /\/\/[^:/@]*:([^@]*)@/.exec(url)?.[1];
  }
}

/**
 * `text` with every occurrence of `url` masked and its password removed:
 * driver messages may quote the connection string or the password itself.
 */
export function maskCredentials(text: string, url: string): string {
  let out = text.split(url).join(maskUrl(url));
  const pw = passwordOf(url);
  if (pw && pw.length >= 3) {
    out = out.split(pw).join("***");
    const encoded = encodeURIComponent(pw);
    if (encoded !== pw) out = out.split(encoded).join("***");
  }
  return out;
}

/**
 * Open a connection pool and check the server answers. With a schema, the
 * schema is created when missing and every connection starts with
 * `search_path` set to it (a startup parameter, so no query per checkout).
 * Failures are `ConfigError`s naming the config key, with the password masked.
 */
export async function openPgPool(options: PgPoolOptions): Promise<pg.Pool> {
  const key = options.configKey ?? "database.postgres_url";
  const masked = maskUrl(options.url);
  let schema: string | undefined;
  if (options.schema) {
    const parsed = schemaName.safeParse(options.schema);
    if (!parsed.success) {
      throw new ConfigError(`database.postgres_schema '${options.schema}' must be ${parsed.error.issues[0]?.message}.`, {
        details: { key: "database.postgres_schema" },
      });
    }
    schema = parsed.data;
  }
  const url = normalizePgUrl(options.url);
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new ConfigError(`${key} must be a postgres:// or postgresql:// URL, got '${masked}'.`, { details: { key } });
  }
  const startup: string[] = [];
  // The harness's schema first; `public` stays reachable for extensions installed there.
  if (schema) startup.push(`-c search_path=${schema},public`);
  if (options.statementTimeoutMs) startup.push(`-c statement_timeout=${Math.round(options.statementTimeoutMs)}`);
  // pg is loaded by the first pool: SQLite-only configs never load it
  const { default: pgModule } = await import("pg");
  const pool = new pgModule.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // Startup parameters: set once per connection, no query per checkout.
    options: startup.length ? startup.join(" ") : undefined,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on("error", (err) => options.log(`PostgreSQL connection at ${masked} failed while idle: ${maskCredentials(err.message, options.url)}`));
  try {
    const client = await pool.connect();
    try {
      if (schema) {
        // Several processes may start together: the schema is created under a transaction-scoped lock.
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [SCHEMA_LOCK_KEY]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        await client.query("COMMIT");
      } else {
        await client.query("SELECT 1");
      }
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new ConfigError(`Cannot connect to PostgreSQL at ${masked} (${key}): ${maskCredentials((err as Error).message, options.url)}`, {
      code: "postgres_unreachable",
      details: { key, url: masked },
    });
  }
  return pool;
}

/** Advisory lock key serialising schema creation ("deerflow" as ASCII, minus one). */
const SCHEMA_LOCK_KEY = "7234309289939003254";
