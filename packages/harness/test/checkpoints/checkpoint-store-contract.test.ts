import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { MemoryCheckpointStore, SqliteCheckpointStore } from "../../src/checkpoints";
import { openPostgresStorage } from "../../src/postgres";
import { describeCheckpointStoreContract } from "./checkpoint-store-contract";

const dir = mkdtempSync(join(tmpdir(), "df-cp-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeCheckpointStoreContract("memory", async () => ({ store: new MemoryCheckpointStore(), dispose: async () => undefined }));

let n = 0;
describeCheckpointStoreContract("sqlite", async () => ({ store: new SqliteCheckpointStore(join(dir, `cp-${++n}.db`)), dispose: async () => undefined }));

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
describe.skipIf(!serverUrl)("postgres", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
  });
  afterAll(async () => {
    await db?.drop();
  });
  // Each test gets a schema of its own (the migrations run there), so tests never see each other's rows.
  let schemas = 0;
  describeCheckpointStoreContract("postgres", async () => {
    const storage = await openPostgresStorage({ url: db.url, schema: `cp_${++schemas}`, log: () => undefined, max: 4 });
    return { store: storage.checkpointStore, dispose: () => storage.close() };
  });
});
