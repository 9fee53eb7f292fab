import { createRunOutcomeRecorder } from "../../src/runtime";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import {
  createMemoryStores,
  emptyUsage,
  openSqliteStores,
  persistenceDbPath,
  runUsageFromMessages,
  runUsageFromOutcome,
} from "../../src/persistence";
import type { PersistenceStores, RunRecord, ThreadRecord } from "../../src/persistence";

function thread(id: string, patch: Partial<ThreadRecord> = {}): ThreadRecord {
  return { threadId: id, userId: "default", status: "idle", metadata: {}, displayName: null, createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z", ...patch };
}

function run(id: string, threadId: string, patch: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: id,
    threadId,
    userId: "default",
    assistantId: "lead_agent",
    status: "pending",
    metadata: {},
    kwargs: {},
    multitaskStrategy: "reject",
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
    usage: emptyUsage(),
    stopReason: null,
    error: null,
    modelName: null,
    ...patch,
  };
}

const backends: Array<[string, () => PersistenceStores]> = [
  ["sqlite", () => openSqliteStores(path.join(mkdtempSync(path.join(tmpdir(), "df-persist-")), "gateway.db"))],
  ["memory", () => createMemoryStores()],
];

describe.each(backends)("%s stores (shared contract)", (_name, open) => {
  it("threads: create/get/update/delete, search order, filters, paging and user scoping", async () => {
    const s = open();
    await s.threads.create(thread("a", { updatedAt: "2024-01-02T00:00:00.000Z", metadata: { kind: "x" } }));
    await s.threads.create(thread("b", { updatedAt: "2024-01-03T00:00:00.000Z", metadata: { kind: "y" } }));
    await s.threads.create(thread("c", { updatedAt: "2024-01-03T00:00:00.000Z", metadata: { kind: "x", deerflow_pinned: true } }));
    await s.threads.create(thread("d", { updatedAt: "2024-01-09T00:00:00.000Z", userId: "other" }));
    await expect(s.threads.create(thread("a"))).rejects.toThrow();
    const ids = async (f: Partial<Parameters<PersistenceStores["threads"]["search"]>[0]> = {}) =>
      (await s.threads.search({ userId: "default", limit: 100, offset: 0, ...f })).map((t) => t.threadId);
    // pinned first, then updated_at desc, then id desc; other users' rows never listed
    expect(await ids()).toEqual(["c", "b", "a"]);
    await s.threads.create(thread("e", { updatedAt: "2024-01-03T00:00:00.000Z" }));
    expect(await ids()).toEqual(["c", "e", "b", "a"]);
    expect(await ids({ metadata: { kind: "x" } })).toEqual(["c", "a"]);
    expect(await ids({ limit: 2, offset: 1 })).toEqual(["e", "b"]);
    await s.threads.update("a", { status: "running", displayName: "Hello", updatedAt: "2024-02-01T00:00:00.000Z" });
    expect(await ids({ status: "running" })).toEqual(["a"]);
    expect((await s.threads.listRunning()).map((t) => t.threadId)).toEqual(["a"]);
    expect(await s.threads.get("a")).toEqual(thread("a", { status: "running", displayName: "Hello", updatedAt: "2024-02-01T00:00:00.000Z", metadata: { kind: "x" } }));
    await s.threads.update("missing", { status: "error" });
    expect(await s.threads.get("missing")).toBeUndefined();
    await s.threads.delete("a");
    expect(await s.threads.get("a")).toBeUndefined();
    // returned rows are copies: mutating them does not change the store
    const got = (await s.threads.get("b"))!;
    got.metadata.kind = "mutated";
    expect((await s.threads.get("b"))!.metadata.kind).toBe("y");
    await s.close();
  });

  it("runs: newest first per thread, update, orphan recovery, delete by thread", async () => {
    const s = open();
    await s.runs.create(run("r1", "t", { createdAt: "2024-01-01T00:00:01.000Z", status: "success" }));
    await s.runs.create(run("r2", "t", { createdAt: "2024-01-01T00:00:02.000Z", status: "running" }));
    await s.runs.create(run("r3", "u", { status: "pending" }));
    expect((await s.runs.listByThread("t")).map((r) => r.runId)).toEqual(["r2", "r1"]);
    await s.runs.update("r1", { usage: { ...emptyUsage(), totalTokens: 42 }, stopReason: "done" });
    expect((await s.runs.get("r1"))!).toMatchObject({ status: "success", stopReason: "done", usage: { totalTokens: 42, llmCallCount: 0 } });
    const recovered = await s.runs.recoverOrphans("2024-05-05T00:00:00.000Z");
    expect(recovered.map((r) => r.runId).sort()).toEqual(["r2", "r3"]);
    expect(await s.runs.get("r2")).toMatchObject({ status: "error", stopReason: "orphan_recovered", updatedAt: "2024-05-05T00:00:00.000Z" });
    expect((await s.runs.get("r1"))!.status).toBe("success");
    await s.runs.deleteByThread("t");
    expect(await s.runs.listByThread("t")).toEqual([]);
    expect(await s.runs.get("r3")).toBeDefined();
    await s.close();
  });

  it("updates change only the patched fields, so concurrent patches of different fields both land", async () => {
    const s = open();
    await s.threads.create(thread("p", { metadata: { keep: 1 }, displayName: "Old" }));
    await s.runs.create(run("rp", "p", { metadata: { keep: 2 }, modelName: "m" }));
    await Promise.all([
      s.threads.update("p", { status: "running" }),
      s.threads.update("p", { displayName: "New", updatedAt: "2024-03-03T00:00:00.000Z" }),
      s.runs.update("rp", { status: "running", updatedAt: "2024-03-03T00:00:00.000Z" }),
      s.runs.update("rp", { usage: { ...emptyUsage(), totalTokens: 7 }, error: "boom" }),
    ]);
    expect(await s.threads.get("p")).toMatchObject({ status: "running", displayName: "New", metadata: { keep: 1 }, updatedAt: "2024-03-03T00:00:00.000Z", createdAt: "2024-01-01T00:00:00.000Z" });
    expect(await s.runs.get("rp")).toMatchObject({ status: "running", error: "boom", usage: { totalTokens: 7 }, metadata: { keep: 2 }, modelName: "m", assistantId: "lead_agent" });
    await s.runs.update("missing", { status: "error" });
    expect(await s.runs.get("missing")).toBeUndefined();
    await s.close();
  });

  it("messages: insert once per id (content replaced in place), paging from the end, run ids", async () => {
    const s = open();
    await s.messages.record("t", "r1", [{ id: "m1", type: "human", content: "hi" }, { id: "m2", type: "ai", content: "draft" }, { type: "ai", content: "no id" }], "2024-01-01T00:00:00.000Z");
    await s.messages.record("t", "r2", [{ id: "m1", type: "human", content: "hi" }, { id: "m2", type: "ai", content: "final" }, { id: "m3", type: "human", content: "again" }], "2024-01-02T00:00:00.000Z");
    await s.messages.record("other", "r9", [{ id: "m1", type: "human", content: "elsewhere" }], "2024-01-02T00:00:00.000Z");
    const all = await s.messages.page("t", { limit: 10 });
    expect(all.hasMore).toBe(false);
    expect(all.rows.map((r) => [r.messageId, r.runId, r.messageType, r.content.content])).toEqual([
      ["m1", "r1", "human", "hi"],
      ["m2", "r1", "ai", "final"],
      ["m3", "r2", "human", "again"],
    ]);
    const last = await s.messages.page("t", { limit: 2 });
    expect(last.hasMore).toBe(true);
    expect(last.rows.map((r) => r.messageId)).toEqual(["m2", "m3"]);
    const before = await s.messages.page("t", { limit: 2, beforeSeq: last.rows[0].seq });
    expect(before).toMatchObject({ hasMore: false, rows: [{ messageId: "m1" }] });
    expect([...(await s.messages.runIds("t")).entries()]).toEqual([["m1", "r1"], ["m2", "r1"], ["m3", "r2"]]);
    await s.messages.deleteByThread("t");
    expect((await s.messages.page("t", { limit: 10 })).rows).toEqual([]);
    expect((await s.messages.page("other", { limit: 10 })).rows).toHaveLength(1);
    await s.close();
  });
});

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

describe("runUsageFromMessages", () => {
  it("counts only the run's own AI messages (fallback for a run without an outcome)", () => {
    const old = aiMessage("old", { id: "a0", usage_metadata: { input_tokens: 100, output_tokens: 100, total_tokens: 200 } });
    const h = humanMessage("q", { id: "h1" });
    const a1 = aiMessage("x", { id: "a1", usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } });
    const a2 = aiMessage("y", { id: "a2" });
    const u = runUsageFromMessages([old, h, a1, a2], new Set(["a0"]));
    expect(u).toMatchObject({ messageCount: 3, llmCallCount: 2, totalInputTokens: 3, totalOutputTokens: 4, totalTokens: 7, leadAgentTokens: 7 });
  });
});

describe("runUsageFromOutcome", () => {
  it("takes totals and the split by caller from the typed outcome", () => {
    const rec = createRunOutcomeRecorder();
    rec.recordUsage("lead_agent", { input_tokens: 10, output_tokens: 5 });
    rec.recordUsage("lead_agent", { input_tokens: 1, output_tokens: 1, total_tokens: 2 });
    rec.recordUsage("subagent:researcher", { input_tokens: 100, output_tokens: 20, total_tokens: 120 });
    rec.recordUsage("middleware:title", { input_tokens: 3, output_tokens: 1, total_tokens: 4 });
    const a1 = aiMessage("x", { id: "a1" });
    const u = runUsageFromOutcome(rec.snapshot(), [aiMessage("old", { id: "a0" }), a1], new Set(["a0"]));
    expect(u).toEqual({
      totalInputTokens: 114,
      totalOutputTokens: 27,
      totalTokens: 141,
      llmCallCount: 2,
      leadAgentTokens: 17,
      subagentTokens: 120,
      middlewareTokens: 4,
      messageCount: 1,
    });
  });
});
