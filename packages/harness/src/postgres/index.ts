export { maskCredentials, maskUrl, openPgPool } from "./pool";
export type { PgPoolOptions } from "./pool";
export { MIGRATION_LOCK_KEY, MigrationError, runMigrations } from "./migrate";
export type { Migration, MigrationOutcome } from "./migrate";
export { PostgresCheckpointStore } from "./checkpoint-store";
export { PostgresMessageStore, PostgresRunStore, PostgresThreadStore } from "./persistence-stores";
export { PostgresRunLeases, PostgresRunLock } from "./run-backends";
export { openPostgresStorage } from "./open-storage";
export type { PostgresStorage, PostgresStorageOptions } from "./open-storage";
