import type { Migration } from "@deerflow-ts/harness";
import type { Pool, PoolClient } from "pg";

/** The migration component of the account tables. */
export const AUTH_COMPONENT = "auth";

/**
 * The account tables on PostgreSQL: the same columns as `auth.db`, prefixed
 * `auth_` so they sit beside the harness's tables in one schema. Times stay
 * ISO-8601 text (as in SQLite), so both stores return identical records and
 * sort the same way; lockout instants are epoch milliseconds (BIGINT).
 */
export const AUTH_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "accounts, access tokens, login failures",
    up: `
CREATE TABLE IF NOT EXISTS auth_users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  email_key TEXT NOT NULL CONSTRAINT auth_users_email_key UNIQUE,
  password_hash TEXT,
  system_role TEXT NOT NULL CHECK (system_role IN ('admin', 'user')),
  needs_setup BOOLEAN NOT NULL DEFAULT false,
  oauth_provider TEXT,
  oauth_subject TEXT,
  token_version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS auth_users_oauth ON auth_users (oauth_provider, oauth_subject) WHERE oauth_subject IS NOT NULL;
CREATE INDEX IF NOT EXISTS auth_users_admins ON auth_users (system_role) WHERE system_role = 'admin';
CREATE TABLE IF NOT EXISTS auth_access_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES auth_users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE INDEX IF NOT EXISTS auth_access_tokens_user ON auth_access_tokens (user_id);
CREATE TABLE IF NOT EXISTS auth_login_failures (
  account TEXT NOT NULL,
  address TEXT NOT NULL,
  failures INTEGER NOT NULL,
  locked_until BIGINT NOT NULL DEFAULT 0,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (account, address)
);`,
  },
];

/**
 * Run `fn` in one transaction on a pooled connection: committed when it
 * returns, rolled back when it throws (the error is rethrown as is).
 */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** PostgreSQL's SQLSTATE of a driver error, if any. */
export function sqlState(err: unknown): string | undefined {
  return (err as { code?: unknown }).code && typeof (err as { code?: unknown }).code === "string" ? ((err as { code: string }).code as string) : undefined;
}
