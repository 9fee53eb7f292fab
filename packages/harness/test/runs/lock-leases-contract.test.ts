import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { MemoryRunLeases, MemoryRunLock, SqliteRunLocks } from "../../src/persistence";
import { openPostgresStorage } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";
import { describeRunLeasesContract } from "./leases-contract";
import { describeRunLockContract } from "./lock-contract";

const dir = mkdtempSync(path.join(tmpdir(), "df-lock-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeRunLockContract("memory", async () => {
  const lock = new MemoryRunLock();
  return { locks: [lock, lock], dispose: async () => undefined };
});
describeRunLeasesContract("memory", async () => {
  const leases = new MemoryRunLeases();
  return { leases: [leases, leases], dispose: async () => undefined };
});

// Two connections on one file, as two processes on one data dir.
let files = 0;
const twoSqlite = () => {
  const file = path.join(dir, `locks-${++files}.db`);
  const a = new SqliteRunLocks(file);
  const b = new SqliteRunLocks(file);
  return { a, b, dispose: async () => (a.close(), b.close()) };
};
describeRunLockContract("sqlite", async () => {
  const { a, b, dispose } = twoSqlite();
  return { locks: [a.lock, b.lock], dispose };
});
describeRunLeasesContract("sqlite", async () => {
  const { a, b, dispose } = twoSqlite();
  return { leases: [a.leases, b.leases], dispose };
});

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
describe.skipIf(!serverUrl)("postgres", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
  });
  afterAll(async () => {
    await db?.drop();
  });
  // Two pools on one schema, as two processes on one database; a schema per test.
  let schemas = 0;
  const twoPools = async (): Promise<[PostgresStorage, PostgresStorage]> => {
    const schema = `lk_${++schemas}`;
    return Promise.all([0, 1].map(() => openPostgresStorage({ url: db.url, schema, log: () => undefined, max: 4 }))) as Promise<[PostgresStorage, PostgresStorage]>;
  };
  describeRunLockContract("postgres", async () => {
    const [a, b] = await twoPools();
    return { locks: [a.runLock, b.runLock], dispose: async () => void (await Promise.all([a.close(), b.close()])) };
  });
  describeRunLeasesContract("postgres", async () => {
    const [a, b] = await twoPools();
    return { leases: [a.runLeases, b.runLeases], dispose: async () => void (await Promise.all([a.close(), b.close()])) };
  });
});
