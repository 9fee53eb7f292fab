import { randomBytes } from "node:crypto";

/** A database of its own on a shared test server. */
export interface FreshDatabase {
  readonly url: string;
  /** Drop the database (closing whatever still connects to it). */
  drop(): Promise<void>;
}

/**
 * Create an empty database on the server at `serverUrl` (a test file's own,
 * so files running in parallel never see each other's tables).
 */
export async function freshPostgresDatabase(serverUrl: string, prefix = "t"): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  // loaded here: the testing entry (the demo's scripted model comes from it) must not load pg on import
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
