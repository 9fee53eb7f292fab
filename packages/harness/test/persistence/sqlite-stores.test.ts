import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStores, persistenceDbPath } from "../../src/persistence";
import { threadRecord as thread } from "./store-contract";

// The behaviour every backend shares is in store-contract.ts; this file holds what only SQLite has.
describe("SQLite stores on one file", () => {
  it("two openers of {dataDir}/gateway.db (gateway + client) see each other's writes", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "df-persist-"));
    expect(persistenceDbPath(dataDir)).toBe(path.join(dataDir, "gateway.db"));
    const gateway = openSqliteStores(persistenceDbPath(dataDir));
    const client = openSqliteStores(persistenceDbPath(dataDir));
    await gateway.threads.create(thread("from-gw"));
    await client.threads.create(thread("from-client", { updatedAt: "2024-03-01T00:00:00.000Z" }));
    expect((await gateway.threads.search({ userId: "default", limit: 10, offset: 0 })).map((t) => t.threadId)).toEqual(["from-client", "from-gw"]);
    expect((await client.threads.get("from-gw"))?.threadId).toBe("from-gw");
    await gateway.close();
    await client.close();
  });
});
