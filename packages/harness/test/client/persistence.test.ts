import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import { DeerFlowClient, LEGACY_THREAD_INDEX_PATH } from "../../src/client";
import type { AgentFactory } from "../../src/deerflow-runtime";
import { createMemoryStores, openSqliteStores, persistenceDbPath } from "../../src/persistence";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";

function factory(script: ScriptStep[]): AgentFactory {
  const model = new ScriptedModel(script);
  return ({ checkpointer }) => createAgent({ model, checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
}

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), "df-client-persist-"));
}

describe("DeerFlowClient persistence (shared with the gateway)", () => {
  it("records threads, runs and the transcript in {dataDir}/gateway.db", async () => {
    const dataDir = tmp();
    const client = new DeerFlowClient({
      dataDir,
      checkpointer: new MemoryCheckpointStore(),
      agentFactory: factory([{ text: "Answer one.", usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } }]),
    });
    await client.chat("question", { threadId: "t-rec" });
    await client.close();
    expect(existsSync(persistenceDbPath(dataDir))).toBe(true);
    // a second opener of the same file (what the gateway does) sees everything
    const stores = openSqliteStores(persistenceDbPath(dataDir));
    const row = await stores.threads.get("t-rec");
    expect(row).toMatchObject({ threadId: "t-rec", userId: "default", status: "idle", displayName: null });
    const runs = await stores.runs.listByThread("t-rec");
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "success", assistantId: "lead_agent", error: null, usage: { llmCallCount: 1, totalTokens: 7, messageCount: 2 } });
    const page = await stores.messages.page("t-rec", { limit: 10 });
    expect(page.rows.map((r) => [r.messageType, r.runId])).toEqual([
      ["human", runs[0].runId],
      ["ai", runs[0].runId],
    ]);
    await stores.close();
  });

  it("writes only the messages each run added to the transcript", async () => {
    const stores = createMemoryStores();
    const record = stores.messages.record.bind(stores.messages);
    const written: string[][] = [];
    stores.messages.record = async (threadId, runId, messages, createdAt) => {
      written.push(messages.map((m) => String(m.type)));
      return record(threadId, runId, messages, createdAt);
    };
    const client = new DeerFlowClient({ dataDir: tmp(), stores, checkpointer: new MemoryCheckpointStore(), agentFactory: factory(["one", "two", "three"]) });
    for (const q of ["a", "b", "c"]) await client.chat(q, { threadId: "t-inc" });
    expect(written).toEqual([
      ["human", "ai"],
      ["human", "ai"],
      ["human", "ai"],
    ]);
    expect((await stores.messages.page("t-inc", { limit: 10 })).rows).toHaveLength(6);
    await client.close();
  });

  it("marks failed runs as error on the run and the thread", async () => {
    const stores = createMemoryStores();
    const client = new DeerFlowClient({ dataDir: tmp(), stores, checkpointer: new MemoryCheckpointStore(), agentFactory: factory([{ error: { kind: "auth", message: "bad key", status: 401 } }]) });
    await expect(client.chat("x", { threadId: "t-fail" })).rejects.toThrow(/bad key/);
    expect(await stores.threads.get("t-fail")).toMatchObject({ status: "error" });
    expect((await stores.runs.listByThread("t-fail"))[0]).toMatchObject({ status: "error", error: expect.stringMatching(/bad key/) });
    // injected stores are not closed by the client
    await client.close();
    expect(await stores.threads.get("t-fail")).toBeDefined();
  });

  it("records a run the consumer stopped reading as interrupted", async () => {
    const stores = createMemoryStores();
    const client = new DeerFlowClient({ dataDir: tmp(), stores, checkpointer: new MemoryCheckpointStore(), agentFactory: factory(["A long answer that streams in pieces."]) });
    for await (const ev of client.stream("go", { threadId: "t-stop" })) {
      if (ev.type === "messages-tuple") break;
    }
    expect(await stores.threads.get("t-stop")).toMatchObject({ status: "interrupted" });
    expect((await stores.runs.listByThread("t-stop"))[0].status).toBe("interrupted");
  });

  it("keeps the thread title as the display name (listed as values.title)", async () => {
    const stores = createMemoryStores();
    const model = new ScriptedModel(["Titled answer."]);
    const client = new DeerFlowClient({
      dataDir: tmp(),
      stores,
      checkpointer: new MemoryCheckpointStore(),
      agentFactory: ({ checkpointer }) =>
        createAgent({
          model,
          checkpointer,
          stateSchema: threadStateSchema,
          name: "lead_agent",
          middleware: [{ name: "title", afterAgent: (state) => (state.title ? undefined : { title: "My thread" }) }],
        }),
    });
    await client.chat("hello", { threadId: "t-title" });
    expect((await stores.threads.get("t-title"))?.displayName).toBe("My thread");
    expect((await client.listThreads()).find((t) => t.thread_id === "t-title")?.values).toEqual({ title: "My thread" });
  });

  it("refuses a thread row owned by another user", async () => {
    const stores = createMemoryStores();
    await stores.threads.create({ threadId: "t-other", userId: "alice", status: "idle", metadata: {}, displayName: null, createdAt: "2024-01-01T00:00:00.000Z", updatedAt: "2024-01-01T00:00:00.000Z" });
    const client = new DeerFlowClient({ dataDir: tmp(), stores, checkpointer: new MemoryCheckpointStore(), agentFactory: factory(["never"]) });
    await expect(client.chat("hi", { threadId: "t-other" })).rejects.toMatchObject({ status: 404 });
    await expect(client.getThread("t-other")).rejects.toMatchObject({ status: 404 });
    expect(await client.listThreads()).toEqual([]);
  });

  it("imports the old JSON thread index once, then renames it", async () => {
    const dataDir = tmp();
    const legacy = path.join(dataDir, LEGACY_THREAD_INDEX_PATH);
    mkdirSync(path.dirname(legacy), { recursive: true });
    writeFileSync(
      legacy,
      JSON.stringify({
        version: 1,
        threads: {
          old1: { thread_id: "old1", created_at: "2024-01-01T00:00:00.000Z", updated_at: "2024-01-05T00:00:00.000Z", status: "idle", title: "Old one", metadata: { k: 1 } },
          old2: { thread_id: "old2", created_at: "2024-01-01T00:00:00.000Z", updated_at: "2024-01-06T00:00:00.000Z", status: "running", title: null, metadata: {} },
          bad: { nope: true },
        },
      }),
    );
    const client = new DeerFlowClient({ dataDir, checkpointer: new MemoryCheckpointStore(), agentFactory: factory([]) });
    const list = await client.listThreads();
    expect(list.map((t) => [t.thread_id, t.status, t.values])).toEqual([
      ["old2", "error", {}],
      ["old1", "idle", { title: "Old one" }],
    ]);
    expect(list[1]).toMatchObject({ created_at: "2024-01-01T00:00:00.000+00:00", updated_at: "2024-01-05T00:00:00.000+00:00", metadata: { k: 1 } });
    expect(existsSync(legacy)).toBe(false);
    expect(existsSync(`${legacy}.imported`)).toBe(true);
    await client.close();
    // a fresh client does not import again (and still sees the rows in gateway.db)
    writeFileSync(legacy, JSON.stringify({ threads: { old3: { thread_id: "old3", created_at: "x", updated_at: "y" } } }));
    const again = new DeerFlowClient({ dataDir, checkpointer: new MemoryCheckpointStore(), agentFactory: factory([]) });
    expect((await again.listThreads()).map((t) => t.thread_id).sort()).toEqual(["old1", "old2", "old3"]);
    await again.close();
  });

  it("uses in-memory stores with database.backend: memory (nothing written to disk)", async () => {
    const dir = tmp();
    const cfg = path.join(dir, "config.yaml");
    writeFileSync(cfg, "config_version: 34\nmodels: []\nsandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\ndatabase:\n  backend: memory\n");
    const dataDir = path.join(dir, "data");
    const client = new DeerFlowClient({ configPath: cfg, dataDir, agentFactory: factory(["mem answer"]) });
    expect(await client.chat("hi", { threadId: "t-mem" })).toBe("mem answer");
    expect((await client.listThreads()).map((t) => t.thread_id)).toEqual(["t-mem"]);
    expect(existsSync(persistenceDbPath(dataDir))).toBe(false);
    await client.close();
  });
});
