import type pg from "pg";
import type { PersistenceStores } from "../persistence/types";
import { PostgresCheckpointStore } from "./checkpoint-store";
import { runMigrations } from "./migrate";
import type { Migration } from "./migrate";
import { PostgresMessageStore, PostgresRunStore, PostgresThreadStore } from "./persistence-stores";
import { openPgPool } from "./pool";
import { PostgresRunLeases, PostgresRunLock } from "./run-backends";
import { CHECKPOINT_MIGRATIONS, PERSISTENCE_MIGRATIONS, RUN_BACKEND_MIGRATIONS } from "./schema";

/** The components of the core stores and their migrations, applied in this order. */
const COMPONENTS: ReadonlyArray<readonly [string, Migration[]]> = [
  ["checkpoints", CHECKPOINT_MIGRATIONS],
  ["persistence", PERSISTENCE_MIGRATIONS],
  ["run_backends", RUN_BACKEND_MIGRATIONS],
];

/** What {@link openPostgresStorage} opens. */
export interface PostgresStorageOptions {
  url: string;
  /** `database.postgres_schema` (tables go there; created when missing). */
  schema?: string | null;
  log: (message: string) => void;
  /** Pool size (default 10). */
  max?: number;
  /** Server-side statement timeout in ms (default none). */
  statementTimeoutMs?: number | null;
}

/** The core stores on one PostgreSQL pool. */
export interface PostgresStorage {
  readonly pool: pg.Pool;
  readonly checkpointStore: PostgresCheckpointStore;
  readonly stores: PersistenceStores;
  readonly runLock: PostgresRunLock;
  readonly runLeases: PostgresRunLeases;
  /** End the pool (after the stores' last writes resolved). */
  close(): Promise<void>;
}

/**
 * Open the pool, bring the tables up to date (each component's migrations
 * under the advisory lock, so processes starting together are safe) and
 * return the stores. Unreachable servers and bad URLs are `ConfigError`s
 * naming `database.postgres_url`, with the password masked.
 */
export async function openPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  const pool = await openPgPool({ url: options.url, schema: options.schema, max: options.max, statementTimeoutMs: options.statementTimeoutMs, log: options.log });
  try {
    for (const [component, migrations] of COMPONENTS) {
      const outcome = await runMigrations(pool, component, migrations);
      if (outcome.applied.length) options.log(`PostgreSQL: applied ${component} migrations ${outcome.applied.join(", ")}`);
      if (outcome.unknown.length) {
        options.log(`PostgreSQL: the database has ${component} migrations ${outcome.unknown.join(", ")} that this release does not know (a newer release ran on it)`);
      }
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  const threads = new PostgresThreadStore(pool);
  const runs = new PostgresRunStore(pool);
  const messages = new PostgresMessageStore(pool);
  let closed: Promise<void> | undefined;
  // Writes the stores were handed and not seen answered go out before the pool ends.
  const close = () => (closed ??= Promise.all([threads.settled(), runs.settled(), messages.settled()]).then(() => pool.end()));
  return {
    pool,
    checkpointStore: new PostgresCheckpointStore(pool),
    stores: {
      threads,
      runs,
      messages,
      // The storage closes the pool once for every store on it.
      async close() {},
    },
    runLock: new PostgresRunLock(pool),
    runLeases: new PostgresRunLeases(pool),
    close,
  };
}
