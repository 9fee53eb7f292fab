import path from "node:path";
import type pg from "pg";
import { ConfigError } from "../errors";
import { openPgPool } from "../postgres";
import { MEMORY_DB_FILE, SqliteMemoryIndex } from "./index-db";
import { PgMemoryIndex } from "./index-pg";
import type { MemoryIndex } from "./index-types";

/** The `database:` keys the memory index follows. */
export interface MemoryDatabase {
  backend?: "memory" | "sqlite" | "postgres" | null;
  postgres_url?: string | null;
  postgres_schema?: string | null;
}

/**
 * The index `database:` names: `{base}/memory.db` on SQLite (and the memory
 * backend: memory survives restarts either way), the `memory_*` tables on
 * PostgreSQL — through the process's shared pool when given, else a small
 * pool of its own at `database.postgres_url` (opened on first use).
 * @throws ConfigError when the backend is postgres and neither a pool nor a URL is there.
 */
export function openMemoryIndex(options: { base: string; database?: MemoryDatabase | null; pgPool?: pg.Pool; log: (message: string) => void }): MemoryIndex {
  const db = options.database;
  if (db?.backend !== "postgres") return new SqliteMemoryIndex(path.join(options.base, MEMORY_DB_FILE));
  if (options.pgPool) return new PgMemoryIndex({ pool: options.pgPool });
  const url = db.postgres_url;
  if (!url) throw new ConfigError("database.backend is 'postgres' but database.postgres_url is not set (e.g. postgres_url: $DATABASE_URL).", { details: { key: "database.postgres_url" } });
  return new PgMemoryIndex({ pool: () => openPgPool({ url, schema: db.postgres_schema, max: 4, log: options.log }), ownsPool: true });
}
