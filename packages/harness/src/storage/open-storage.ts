import { mkdirSync } from "node:fs";
import path from "node:path";
import { MemoryCheckpointStore, SqliteCheckpointStore } from "../checkpoints";
import type { CheckpointStore } from "../checkpoints";
import type { AppConfig } from "../config";
import { ConfigError } from "../errors";
import { createMemoryStores, openSqliteStores, persistenceDbPath } from "../persistence";
import type { PersistenceStores } from "../persistence";

/** Which database holds a runtime's checkpoints, threads, runs and transcript. */
export type StorageBackendName = "memory" | "sqlite" | "postgres";

/** The stores of one runtime, opened from `database:`. */
export interface OpenedStorage {
  readonly backend: StorageBackendName;
  /** Checkpoints (undefined when the caller supplied its own). */
  readonly checkpointStore?: CheckpointStore;
  /** Threads, runs, transcript (undefined when the caller supplied its own). */
  readonly stores?: PersistenceStores;
  /** Release what was opened here. */
  close(): Promise<void>;
}

/** What to open (a caller-supplied checkpointer or stores is left alone). */
export interface OpenStorageOptions {
  dataDir: string;
  needCheckpoints: boolean;
  needStores: boolean;
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
  if (!options.needCheckpoints && !options.needStores) return { backend, close };
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
  throw new ConfigError(`database.backend '${backend}' is not supported here; use sqlite or memory.`, { details: { key: "database.backend" } });
}
