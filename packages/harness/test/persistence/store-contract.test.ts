import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { createMemoryStores, openSqliteStores } from "../../src/persistence";
import { openPostgresStorage } from "../../src/postgres";
import { describeStoreContract } from "./store-contract";

const dir = mkdtempSync(path.join(tmpdir(), "df-store-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreContract("memory", async () => createMemoryStores());
let n = 0;
describeStoreContract("sqlite", async () => openSqliteStores(path.join(dir, `gateway-${++n}.db`)));

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
describe.skipIf(!serverUrl)("postgres", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
  });
  afterAll(async () => {
    await db?.drop();
  });
  // A schema per test: the migrations run there and no test sees another's rows.
  let schemas = 0;
  describeStoreContract("postgres", async () => {
    const storage = await openPostgresStorage({ url: db.url, schema: `st_${++schemas}`, log: () => undefined, max: 4 });
    return { ...storage.stores, close: () => storage.close() };
  });
});
