export { maskCredentials, maskUrl, openPgPool } from "./pool";
export type { PgPoolOptions } from "./pool";
export { MIGRATION_LOCK_KEY, MigrationError, runMigrations } from "./migrate";
export type { Migration, MigrationOutcome } from "./migrate";
