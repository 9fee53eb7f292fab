import { ConfigError, openPgPool } from "@deerflow-ts/harness";
import type { Pool } from "pg";
import type { AccountStore } from "./account-store";
import { PgUserStore } from "./pg-user-store";
import { openUserStore } from "./user-store";

/** The `database:` keys the account store follows. */
export interface AccountDatabase {
  backend?: "memory" | "sqlite" | "postgres" | null;
  postgres_url?: string | null;
  postgres_schema?: string | null;
}

/** Where {@link openAccountStore} puts the accounts. */
export interface OpenAccountStoreOptions {
  /** The data dir (`auth.db` on SQLite). */
  dataDir: string;
  /** `database:` of the config; PostgreSQL when its backend is `postgres`. */
  database?: AccountDatabase | null;
  /** The process's PostgreSQL pool (the runtime's storage pool), shared instead of opening one. */
  pool?: () => Pool | Promise<Pool>;
  /** Where pool failures are reported (already masked). */
  log?: (message: string) => void;
}

/**
 * Open the account store `database:` names: `{dataDir}/auth.db` on the
 * SQLite and memory backends (accounts outlive a process even then), the
 * `auth_*` tables on PostgreSQL — through the process's shared pool when one
 * is given, else a small pool of its own at `database.postgres_url`.
 * @throws ConfigError when the backend is postgres and no URL is set.
 */
export function openAccountStore(options: OpenAccountStoreOptions): AccountStore {
  const db = options.database;
  if (db?.backend !== "postgres") return openUserStore(options.dataDir);
  const shared = options.pool;
  if (shared) return new PgUserStore({ pool: async () => shared(), ownsPool: false });
  return new PgUserStore({ pool: () => ownPool(db, options.log), ownsPool: true });
}

function ownPool(db: AccountDatabase, log: ((m: string) => void) | undefined): Promise<Pool> {
  if (!db.postgres_url) throw new ConfigError("database.backend is 'postgres' but database.postgres_url is not set (e.g. postgres_url: $DATABASE_URL).", { details: { key: "database.postgres_url" } });
  return openPgPool({ url: db.postgres_url, schema: db.postgres_schema, max: 4, log: log ?? ((m) => console.warn(`[deerflow:auth] ${m}`)) });
}
