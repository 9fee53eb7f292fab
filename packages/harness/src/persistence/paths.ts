import path from "node:path";

/** File name of the thread/run/transcript database inside the data dir. */
export const PERSISTENCE_DB_FILE = "gateway.db";

/**
 * The SQLite file the gateway and the embedded client share for thread
 * metadata, run records and transcripts: `{dataDir}/gateway.db`.
 */
export function persistenceDbPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), PERSISTENCE_DB_FILE);
}
