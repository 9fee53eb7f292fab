import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { emptyUsage } from "../../src/persistence";
import { openPostgresStorage } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";
import { jsonbText, pgText } from "../../src/postgres/statements";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

describe("text PostgreSQL refuses", () => {
  it("NUL becomes U+FFFD in text; NUL and lone surrogates become U+FFFD in jsonb; other text is untouched", () => {
    expect(pgText("a\u0000b")).toBe("a\uFFFDb");
    expect(pgText(null)).toBeNull();
    const fine = { a: "plain \u{1F600} \\u0000 as typed", n: [1, null] };
    expect(jsonbText(fine)).toBe(JSON.stringify(fine));
    expect(JSON.parse(jsonbText({ "k\u0000": ["x\u0000", "lone \ud800 end", "pair \ud83d\ude00"] }))).toEqual({ "k\uFFFD": ["x\uFFFD", "lone \uFFFD end", "pair \u{1F600}"] });
  });
});

describe.skipIf(!serverUrl)("PostgreSQL stores and characters PostgreSQL cannot store", () => {
  let db: FreshDatabase;
  let storage: PostgresStorage;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
    storage = await openPostgresStorage({ url: db.url, schema: "chars", log: () => undefined });
  });
  afterAll(async () => {
    await storage?.close();
    await db?.drop();
  });

  it("thread metadata and titles, run errors and transcript content with NUL or lone surrogates are written, not refused", async () => {
    const { threads, runs, messages } = storage.stores;
    await threads.create({ threadId: "t", userId: "u", status: "idle", metadata: { note: "a\u0000b", odd: "x\udc00" }, displayName: "Ti\u0000tle", createdAt: "x", updatedAt: "x" });
    expect(await threads.get("t")).toMatchObject({ metadata: { note: "a\uFFFDb", odd: "x\uFFFD" }, displayName: "Ti\uFFFDtle" });
    expect((await threads.search({ userId: "u", limit: 5, offset: 0, metadata: { note: "a\u0000b" } })).map((r) => r.threadId)).toEqual(["t"]);
    await threads.update("t", { metadata: { note: "\u0000" }, displayName: "\u0000" });
    expect(await threads.get("t")).toMatchObject({ metadata: { note: "\uFFFD" }, displayName: "\uFFFD" });
    await runs.create({ runId: "r", threadId: "t", userId: "u", assistantId: "a", status: "running", metadata: { m: "\u0000" }, kwargs: {}, multitaskStrategy: "reject", createdAt: "x", updatedAt: "x", usage: emptyUsage(), stopReason: null, error: null, modelName: null });
    await runs.update("r", { status: "error", error: "tool printed \u0000 and died" });
    // JSON columns keep NUL exactly (it is escaped in the JSON text); free text gets U+FFFD
    expect(await runs.get("r")).toMatchObject({ metadata: { m: "\u0000" }, error: "tool printed \uFFFD and died" });
    await messages.record("t", "r", [{ id: "m1", type: "ai", content: "bytes \u0000 and \ud800" }], "x");
    expect((await messages.page("t", { limit: 1 })).rows[0].content).toEqual({ id: "m1", type: "ai", content: "bytes \u0000 and \ud800" });
  });
});
