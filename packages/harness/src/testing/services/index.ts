export { startPostgres } from "./postgres";
export { startRedis } from "./redis";
export { freePort, LocalServerUnavailableError } from "./local-server";
export type { LocalServer } from "./local-server";
export { freshPostgresDatabase } from "./fresh-database";
export type { FreshDatabase } from "./fresh-database";
