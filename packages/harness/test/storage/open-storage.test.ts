import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import type { AppConfig } from "../../src/config";
import { ConfigError } from "../../src/errors";
import { openStorage } from "../../src/storage";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "df-open-storage-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const pgConfig = (database: Record<string, unknown>) => ({ database: { backend: "postgres", ...database } }) as unknown as AppConfig;
const all = (dataDir: string) => ({ dataDir, needCheckpoints: true, needStores: true, log: () => undefined });

describe("openStorage: postgres", () => {
  it("refuses a missing database.postgres_url, naming the key", async () => {
    for (const url of [undefined, null, "", "  "]) {
      const err = (await openStorage(pgConfig({ postgres_url: url }), all(tempDir())).catch((e: unknown) => e)) as ConfigError;
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.details.key).toBe("database.postgres_url");
      expect(err.message).toContain("database.postgres_url");
    }
  });

  it("an unreachable server is a ConfigError naming the key, with the password masked", async () => {
    const port = await freePort();
    const err = (await openStorage(pgConfig({ postgres_url: `postgres://deer:topsecret99@127.0.0.1:${port}/df` }), all(tempDir())).catch((e: unknown) => e)) as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.details.key).toBe("database.postgres_url");
    expect(err.message).toContain(`postgres://deer:***@127.0.0.1:${port}/df`);
    expect(`${err.message} ${JSON.stringify(err.details)}`).not.toContain("topsecret99");
  });

  describe.skipIf(!serverUrl)("on a real server", () => {
    let db: FreshDatabase;
    beforeAll(async () => {
      db = await freshPostgresDatabase(serverUrl!);
    });
    afterAll(async () => {
      await db?.drop();
    });

    it("opens every core store, the run lock and leases in the schema, and writes nothing under the data dir", async () => {
      const dataDir = tempDir();
      const logged: string[] = [];
      const storage = await openStorage(pgConfig({ postgres_url: db.url, postgres_schema: "app" }), { ...all(dataDir), log: (m) => logged.push(m) });
      expect(logged).toEqual([
        "PostgreSQL: applied checkpoints migrations 1",
        "PostgreSQL: applied persistence migrations 1",
        "PostgreSQL: applied run_backends migrations 1, 2",
      ]);
      try {
        expect(storage.backend).toBe("postgres");
        expect(storage.runLock && storage.runLeases && storage.pgPool).toBeTruthy();
        await storage.stores!.threads.create({ threadId: "t", userId: "u", status: "idle", metadata: {}, displayName: null, createdAt: "x", updatedAt: "x" });
        await storage.checkpointStore!.put({ threadId: "t", checkpointId: "c", parentId: null, createdAt: "x", metadata: { step: -1, source: "input" }, delta: {} });
        expect(await storage.runLock!.acquire("t", "r", "me", 2, 1)).toBe(true);
        const tables = await storage.pgPool!.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'app' ORDER BY 1");
        expect(tables.rows.map((r) => r.t)).toEqual([
          "deerflow_checkpoints",
          "deerflow_messages",
          "deerflow_migrations",
          "deerflow_run_leases",
          "deerflow_run_locks",
          "deerflow_runs",
          "deerflow_threads",
        ]);
        expect(readdirSync(dataDir)).toEqual([]);
      } finally {
        await storage.close();
      }
      // Reopened (migrations already applied): the rows are there.
      logged.length = 0;
      const again = await openStorage(pgConfig({ postgres_url: db.url, postgres_schema: "app" }), { ...all(dataDir), log: (m) => logged.push(m) });
      expect(logged).toEqual([]);
      try {
        expect((await again.stores!.threads.get("t"))?.userId).toBe("u");
        expect(await again.checkpointStore!.headId!("t")).toBe("c");
      } finally {
        await again.close();
      }
    });

    it("takes DeerFlow's pool_size and command_timeout; invalid values name their key", async () => {
      const storage = await openStorage(pgConfig({ postgres_url: db.url, pool_size: "3", command_timeout: 0.05 }), all(tempDir()));
      try {
        expect(storage.pgPool!.options.max).toBe(3);
        await expect(storage.pgPool!.query("SELECT pg_sleep(2)")).rejects.toThrow(/statement timeout/);
      } finally {
        await storage.close();
      }
      for (const [database, key] of [
        [{ pool_size: 0 }, "database.pool_size"],
        [{ pool_size: "many" }, "database.pool_size"],
        [{ command_timeout: -1 }, "database.command_timeout"],
      ] as const) {
        const err = (await openStorage(pgConfig({ postgres_url: db.url, ...database }), all(tempDir())).catch((e: unknown) => e)) as ConfigError;
        expect(err).toBeInstanceOf(ConfigError);
        expect(err.details.key).toBe(key);
      }
    });

    it("opens only what is asked (a caller's own stores are left alone) and the run backends on request", async () => {
      const none = await openStorage(pgConfig({ postgres_url: db.url }), { dataDir: tempDir(), needCheckpoints: false, needStores: false });
      expect(none.runLock).toBeUndefined();
      await none.close();
      const locksOnly = await openStorage(pgConfig({ postgres_url: db.url }), { dataDir: tempDir(), needCheckpoints: false, needStores: false, needRunBackends: true });
      try {
        expect(locksOnly.checkpointStore).toBeUndefined();
        expect(locksOnly.stores).toBeUndefined();
        expect(await locksOnly.runLeases!.acquire("r", "t", "me", 2, 1)).toBe(true);
      } finally {
        await locksOnly.close();
      }
    });
  });
});
