import { mkdirSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { z } from "zod";
import { MemoryCheckpointStore, SqliteCheckpointStore } from "../checkpoints";
import type { CheckpointStore } from "../checkpoints";
import type { AppConfig } from "../config";
import { ConfigError } from "../errors";
import { createMemoryStores, openSqliteStores, persistenceDbPath } from "../persistence";
import type { PersistenceStores } from "../persistence";
import { openPostgresStorage } from "../postgres";
import type { RunLeases, RunLock } from "../runs/backend-types";

/** Which database holds a runtime's checkpoints, threads, runs and transcript. */
export type StorageBackendName = "memory" | "sqlite" | "postgres";

/** The stores of one runtime, opened from `database:`. */
export interface OpenedStorage {
  readonly backend: StorageBackendName;
  /** Checkpoints (undefined when the caller supplied its own). */
  readonly checkpointStore?: CheckpointStore;
  /** Threads, runs, transcript (undefined when the caller supplied its own). */
  readonly stores?: PersistenceStores;
  /** The run slot per thread on the same database (PostgreSQL: shared by every process on it). */
  readonly runLock?: RunLock;
  /** The runs' execution leases on the same database. */
  readonly runLeases?: RunLeases;
  /** The PostgreSQL pool the stores use, for other stores of the process to share (postgres only). */
  readonly pgPool?: pg.Pool;
  /** Release what was opened here. */
  close(): Promise<void>;
}

/** What to open (a caller-supplied checkpointer or stores is left alone). */
export interface OpenStorageOptions {
  dataDir: string;
  needCheckpoints: boolean;
  needStores: boolean;
  /** Open the database for its run lock and leases even when neither stores nor checkpoints are needed. */
  needRunBackends?: boolean;
  /** Where PostgreSQL connection trouble is reported (masked); default: a console warning. */
  log?: (message: string) => void;
}

/** DeerFlow's `database.pool_size` and `database.command_timeout` (seconds; null: none), read from the section's extra keys. */
const poolSection = z.object({
  pool_size: z.preprocess((v) => (typeof v === "string" && v.trim() ? Number(v) : v), z.int().positive().max(1000)).optional(),
  command_timeout: z.preprocess((v) => (typeof v === "string" && v.trim() ? Number(v) : v), z.number().positive().nullable()).optional(),
});

function poolSettings(database: unknown): { max: number; statementTimeoutMs: number | null } {
  const parsed = poolSection.safeParse(database ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = `database.${String(issue?.path[0] ?? "pool_size")}`;
    throw new ConfigError(`${key} is invalid: ${issue?.message} (pool_size: a positive integer; command_timeout: seconds > 0, or null for none).`, { details: { key } });
  }
  const timeout = parsed.data.command_timeout;
  // One pool serves the checkpointer and the stores (DeerFlow has one for each: 5 + LangGraph's), hence 10.
  return { max: parsed.data.pool_size ?? 10, statementTimeoutMs: timeout === null ? null : Math.round((timeout ?? 30) * 1000) };
}

/**
 * Open the stores `database:` names: memory, SQLite under the data dir, or
 * PostgreSQL at `database.postgres_url`.
 */
export async function openStorage(config: AppConfig | undefined, options: OpenStorageOptions): Promise<OpenedStorage> {
  const backend = (config?.database?.backend ?? "sqlite") as StorageBackendName;
  const closers: Array<() => unknown> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };
  if (!options.needCheckpoints && !options.needStores && !options.needRunBackends) return { backend, close };
  if (backend === "memory") {
    return {
      backend,
      checkpointStore: options.needCheckpoints ? new MemoryCheckpointStore() : undefined,
      stores: options.needStores ? createMemoryStores() : undefined,
      close,
    };
  }
  if (backend === "sqlite") {
    let checkpointStore: CheckpointStore | undefined;
    let stores: PersistenceStores | undefined;
    if (options.needCheckpoints) {
      const dbDir = path.join(options.dataDir, "data");
      mkdirSync(dbDir, { recursive: true });
      const store = new SqliteCheckpointStore(path.join(dbDir, "deerflow.db"));
      checkpointStore = store;
      closers.push(() => store.close());
    }
    if (options.needStores) {
      mkdirSync(options.dataDir, { recursive: true });
      const s = openSqliteStores(persistenceDbPath(options.dataDir));
      stores = s;
      closers.push(() => s.close());
    }
    return { backend, checkpointStore, stores, close };
  }
  if (backend === "postgres") {
    const url = config?.database?.postgres_url?.trim();
    if (!url) {
      throw new ConfigError("database.backend is 'postgres' but database.postgres_url is not set (e.g. postgres_url: $DATABASE_URL with DATABASE_URL=postgres://user:password@host:5432/db).", {
        details: { key: "database.postgres_url" },
      });
    }
    const log = options.log ?? ((m: string) => console.warn(`[deerflow:postgres] ${m}`));
    const pool = poolSettings(config?.database);
    // Nothing is written under the data dir: every store of the backend lives in the database.
    const pgStorage = await openPostgresStorage({ url, schema: config?.database?.postgres_schema, log, ...pool });
    return {
      backend,
      checkpointStore: options.needCheckpoints ? pgStorage.checkpointStore : undefined,
      stores: options.needStores ? pgStorage.stores : undefined,
      runLock: pgStorage.runLock,
      runLeases: pgStorage.runLeases,
      pgPool: pgStorage.pool,
      close: () => pgStorage.close(),
    };
  }
  throw new ConfigError(`database.backend '${backend}' is not supported; use memory, sqlite or postgres.`, { details: { key: "database.backend" } });
}
