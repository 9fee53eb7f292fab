import type pg from "pg";
import { DeerFlowError } from "../errors";

/** One schema change of a component, applied once per database. */
export interface Migration {
  /** Positive, unique within the component; applied in ascending order. */
  version: number;
  /** Short description, stored beside the version. */
  name: string;
  /** SQL (may hold several statements) or a function running on the migration's transaction. */
  up: string | ((client: pg.PoolClient) => Promise<void>);
}

/** What {@link runMigrations} did. */
export interface MigrationOutcome {
  /** Versions applied by this call (empty when the database was up to date). */
  applied: number[];
  /** Versions stored in the database that this code does not know (a newer release ran here). */
  unknown: number[];
}

/** A migration failed; nothing of this call was kept (one transaction). */
export class MigrationError extends DeerFlowError {
  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super("postgres_migration_failed", message, options);
  }
}

/**
 * Advisory lock key taken by every migration run on a database ("deerflow"
 * as ASCII). Transaction-scoped, so a process killed mid-migration frees it.
 */
export const MIGRATION_LOCK_KEY = "7234309289939003255";

/** The migrations table, created (under the lock) by the first run. */
const TABLE_SQL = `CREATE TABLE IF NOT EXISTS deerflow_migrations (
  component TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (component, version)
)`;

function checkList(component: string, migrations: readonly Migration[]): Migration[] {
  if (!/^[a-z][a-z0-9_.-]*$/.test(component)) throw new MigrationError(`Migration component '${component}' must be lower-case letters, digits, '_', '.', '-'.`);
  const seen = new Set<number>();
  for (const m of migrations) {
    if (!Number.isInteger(m.version) || m.version <= 0) throw new MigrationError(`Migration '${m.name}' of ${component} has version ${m.version}; versions are positive integers.`);
    if (seen.has(m.version)) throw new MigrationError(`Migration version ${m.version} of ${component} is defined twice.`);
    seen.add(m.version);
  }
  return [...migrations].sort((a, b) => a.version - b.version);
}

/**
 * Bring `component`'s tables up to date: every migration not yet recorded
 * in `deerflow_migrations` runs, in version order, and is recorded — all in
 * one transaction holding a PostgreSQL advisory lock, so N processes
 * starting at the same moment apply each migration exactly once (the others
 * wait for the lock, then find nothing left to do). Idempotent.
 */
export async function runMigrations(pool: pg.Pool, component: string, migrations: readonly Migration[]): Promise<MigrationOutcome> {
  const ordered = checkList(component, migrations);
  const client = await pool.connect();
  let current: Migration | undefined;
  try {
    await client.query("BEGIN");
    // A migration (or the wait for another process's) may outlast the pool's statement timeout.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SELECT pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
    await client.query(TABLE_SQL);
    const done = await client.query<{ version: number }>("SELECT version FROM deerflow_migrations WHERE component = $1", [component]);
    const have = new Set(done.rows.map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of ordered) {
      if (have.has(m.version)) continue;
      current = m;
      if (typeof m.up === "string") await client.query(m.up);
      else await m.up(client);
      await client.query("INSERT INTO deerflow_migrations (component, version, name) VALUES ($1, $2, $3)", [component, m.version, m.name]);
      applied.push(m.version);
    }
    current = undefined;
    await client.query("COMMIT");
    const known = new Set(ordered.map((m) => m.version));
    return { applied, unknown: [...have].filter((v) => !known.has(v)).sort((a, b) => a - b) };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    const where = current ? `migration ${current.version} (${current.name}) of ${component}` : `the migrations of ${component}`;
    throw new MigrationError(`PostgreSQL ${where} failed: ${(err as Error).message}`, {
      cause: err,
      details: { component, version: current?.version },
    });
  } finally {
    client.release();
  }
}
