import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { appConfigFromText } from "../../src/config";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { freshPostgresDatabase, ScriptedModel } from "../../src/testing";
import type { FreshDatabase } from "../../src/testing";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

function scriptedModelFactory(model: ScriptedModel) {
  return () => ({ model, warnings: [], config: { name: "m1", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never });
}

describe.skipIf(!serverUrl)("a runtime on database.backend: postgres", () => {
  let db: FreshDatabase;
  const dirs: string[] = [];
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
  });
  afterAll(async () => {
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("keeps checkpoints, threads, runs and the transcript in PostgreSQL: a second runtime on the same database sees the thread", async () => {
    process.env.DEERFLOW_TEST_PG_RUNTIME_URL = db.url;
    const text = [
      "models:",
      "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }",
      "sandbox:",
      "  use: local",
      "database:",
      "  backend: postgres",
      "  postgres_url: $DEERFLOW_TEST_PG_RUNTIME_URL",
      "  postgres_schema: rt",
      "",
    ].join("\n");
    const config = appConfigFromText(text).config;
    const dataA = mkdtempSync(path.join(tmpdir(), "df-pg-rt-a-"));
    const dataB = mkdtempSync(path.join(tmpdir(), "df-pg-rt-b-"));
    dirs.push(dataA, dataB);

    const a = await DeerFlowRuntime.open({ config, dataDir: dataA, modelFactory: scriptedModelFactory(new ScriptedModel(["First answer.", "Second answer."])), log: () => undefined });
    const clientA = new DeerFlowClient(a);
    try {
      expect(await clientA.chat("Hello there", { threadId: "pg-thread" })).toBe("First answer.");
      expect(await clientA.chat("And again", { threadId: "pg-thread" })).toBe("Second answer.");
    } finally {
      await clientA.close();
      await a.close();
    }
    // No SQLite file for these stores: they are all in the database.
    expect(existsSync(path.join(dataA, "data", "deerflow.db"))).toBe(false);
    expect(existsSync(path.join(dataA, "gateway.db"))).toBe(false);

    const b = await DeerFlowRuntime.open({ config, dataDir: dataB, modelFactory: scriptedModelFactory(new ScriptedModel([])), log: () => undefined });
    const clientB = new DeerFlowClient(b);
    try {
      const messages = await clientB.getMessages("pg-thread");
      // (the runtime may add a system message of its own: the conversation is what matters here)
      expect(messages.filter((m) => m.type !== "system").map((m) => [m.type, m.content])).toEqual([
        ["human", "Hello there"],
        ["ai", "First answer."],
        ["human", "And again"],
        ["ai", "Second answer."],
      ]);
      const runs = await b.stores.runs.listByThread("pg-thread");
      expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
      const page = await b.stores.messages.page("pg-thread", { limit: 10 });
      expect(page.rows.map((r) => r.messageType).filter((t) => t !== "system")).toEqual(["human", "ai", "human", "ai"]);
      expect((await b.stores.threads.get("pg-thread"))?.threadId).toBe("pg-thread");
    } finally {
      await clientB.close();
      await b.close();
      delete process.env.DEERFLOW_TEST_PG_RUNTIME_URL;
    }
  });

  it("reports the migrations it applies to the runtime's log, not to the console", async () => {
    process.env.DEERFLOW_TEST_PG_RUNTIME_LOG_URL = db.url;
    const text = ["sandbox:", "  use: local", "database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_PG_RUNTIME_LOG_URL", "  postgres_schema: rt_log", ""].join("\n");
    const config = appConfigFromText(text).config;
    const dataDir = mkdtempSync(path.join(tmpdir(), "df-pg-rt-log-"));
    dirs.push(dataDir);
    const logs: string[] = [];
    const warn = vi.spyOn(console, "warn");
    try {
      const runtime = await DeerFlowRuntime.open({ config, dataDir, modelFactory: scriptedModelFactory(new ScriptedModel([])), log: (m) => void logs.push(m) });
      await runtime.close();
      // a fresh schema: its migrations are applied now, and said so once in the runtime's log
      expect(logs.filter((l) => /PostgreSQL: applied .* migrations/.test(l)).length).toBeGreaterThan(0);
      expect(warn.mock.calls.filter((c) => String(c[0]).includes("PostgreSQL"))).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });
});
