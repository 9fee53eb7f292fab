/**
 * Read-only looks into the PostgreSQL database a config names, for
 * `deerflow doctor` and the start-up banner: a pool opened without
 * `postgres_schema` (opening one with it creates the schema), and tables
 * named with their schema. Nothing here creates or migrates anything, so a
 * doctor run on a fresh database leaves it as it found it.
 */
import type pg from "pg";
import { ConfigError } from "@deerflow-ts/harness/errors";
import { openPgPool } from "@deerflow-ts/harness/postgres";

/** The `database:` keys a peek reads. */
export interface PeekDatabase {
  postgres_url?: string | null;
  postgres_schema?: string | null;
}

/** An open read-only pool and the schema its tables are in (undefined: the server's search_path, `public`). */
export interface PostgresPeek {
  pool: pg.Pool;
  schema: string | undefined;
  /** `table` qualified with the schema, for SQL text. */
  name(table: string): string;
  /** Whether `table` exists (in the schema; a missing schema has none). */
  hasTable(table: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The rule `openPgPool` applies to `database.postgres_schema` (a plain identifier: safe to write unquoted). */
const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/** Open a one-connection pool on the configured database without creating anything in it. */
export async function peekPostgres(database: PeekDatabase): Promise<PostgresPeek> {
  const url = database.postgres_url;
  if (!url) throw new ConfigError("database.backend is 'postgres' but database.postgres_url is not set (e.g. postgres_url: $DATABASE_URL).", { details: { key: "database.postgres_url" } });
  const schema = database.postgres_schema ?? undefined;
  if (schema !== undefined && !SCHEMA.test(schema)) {
    throw new ConfigError(`database.postgres_schema '${schema}' must be a plain lower-case PostgreSQL identifier (a-z, 0-9, _; not starting with a digit; at most 63 characters).`, {
      details: { key: "database.postgres_schema" },
    });
  }
  const pool = await openPgPool({ url, max: 1, log: () => undefined });
  const name = (table: string) => (schema ? `${schema}.${table}` : table);
  return {
    pool,
    schema,
    name,
    async hasTable(table) {
      const res = await pool.query<{ exists: boolean }>("SELECT to_regclass($1) IS NOT NULL AS exists", [name(table)]);
      return res.rows[0]?.exists === true;
    },
    close: () => pool.end().catch(() => undefined),
  };
}
