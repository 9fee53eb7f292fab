import type pg from "pg";
import type { AppConfig } from "../../config";
import { ConfigError } from "../../errors";
import { persistenceDbPath } from "../../persistence/paths";
import { runMigrations } from "../../postgres/migrate";
import { FileAgentStore } from "./file-store";
import { AGENTS_COMPONENT, AGENTS_MIGRATIONS } from "./postgres-schema";
import { PostgresAgentRows } from "./postgres-rows";
import { SqlAgentStore } from "./sql-store";
import { SqliteAgentRows } from "./sqlite-rows";
import type { AgentStore } from "./types";

/** What {@link openAgentStore} needs besides the config. */
export interface OpenAgentStoreOptions {
  /** Runtime home: the file backend's root, the SQLite file's folder, where agents' memory lives. */
  dataDir: string;
  /** The process's PostgreSQL pool (required for `db` on `database.backend: postgres`). */
  pgPool?: pg.Pool;
}

/** `agent_storage.backend` of a config (default `file`). */
export function agentStorageBackend(config: AppConfig | undefined): "file" | "db" {
  return (config as { agent_storage?: { backend?: "file" | "db" } | null } | undefined)?.agent_storage?.backend ?? "file";
}

/**
 * Open the store `agent_storage.backend` names. `db` puts agents in the
 * database `database.backend` names — the gateway's SQLite file, or
 * PostgreSQL (its migrations run here, under the migration lock) — and is
 * refused on `memory`, where agents would vanish with the process. Read
 * once at start: switching backends needs a restart (and
 * `deerflow agents import` to bring file agents over).
 */
export async function openAgentStore(config: AppConfig | undefined, options: OpenAgentStoreOptions): Promise<AgentStore> {
  if (agentStorageBackend(config) === "file") return new FileAgentStore(options.dataDir);
  const database = config?.database?.backend ?? "sqlite";
  if (database === "sqlite") return new SqlAgentStore(new SqliteAgentRows(persistenceDbPath(options.dataDir)), options.dataDir);
  if (database === "postgres") {
    if (!options.pgPool) throw new ConfigError("agent_storage.backend is 'db' on database.backend 'postgres', but no PostgreSQL pool was opened.", { details: { key: "agent_storage.backend" } });
    await runMigrations(options.pgPool, AGENTS_COMPONENT, AGENTS_MIGRATIONS);
    return new SqlAgentStore(new PostgresAgentRows(options.pgPool), options.dataDir);
  }
  throw new ConfigError(
    `agent_storage.backend 'db' needs a durable database, but database.backend is '${database}': set database.backend to sqlite or postgres, or use agent_storage.backend: file.`,
    { code: "agent_storage_invalid", details: { key: "agent_storage.backend" } },
  );
}
