import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { createMemoryTools, resolveMemoryConfig } from "../../src/memory";
import { createRunContext, createRunOutcomeRecorder } from "../../src/runtime";
import type { ToolRuntime } from "../../src/tools";
import { scriptedService } from "./_helpers";

const toolRt = { context: createRunContext({ threadId: "t", runId: "r", context: { user_id: "u" } }), outcome: createRunOutcomeRecorder(), toolCallId: "c", signal: new AbortController().signal, writer() {}, emit() {}, namespace: [], state: { messages: [] }, interrupt() { throw new Error("no"); } } as unknown as ToolRuntime;

describe("memory config", () => {
  it("reads backend_config with DeerFlow's defaults and accepts the older flat keys", () => {
    const d = resolveMemoryConfig(null);
    expect(d).toMatchObject({ enabled: true, injection_enabled: true, mode: "middleware", shutdown_flush_timeout_seconds: 30 });
    expect(d.backend).toMatchObject({ debounce_seconds: 30, max_facts: 100, max_injection_tokens: 2000, fact_confidence_threshold: 0.7, queue_max_depth: 1000, model: null, embedding: null, retrieval_adapter: "fts5" });
    const flat = resolveMemoryConfig({ debounce_seconds: "5", max_facts: 10000, model_name: "fast", backend_config: { max_facts: 20000 } });
    expect(flat.backend).toMatchObject({ debounce_seconds: 5, max_facts: 20000, model: "fast" });
    expect(resolveMemoryConfig({ backend_config: { model: { model: "gpt-4o-mini", temperature: 0 } } }).backend.model).toMatchObject({ model: "gpt-4o-mini" });
    expect(() => resolveMemoryConfig({ backend_config: { max_injection_tokens: 10 } })).toThrow(ConfigError);
    expect(() => resolveMemoryConfig({ mode: "passive" })).toThrow(/memory\.mode/);
  });
});

describe("memory tools (mode: tool)", () => {
  it("search/add/update/delete work on the caller's memory and failures are error results", async () => {
    const h = scriptedService([], { memory: { mode: "tool" } });
    try {
      const [search, add, update, del] = createMemoryTools(h.service);
      expect([search, add, update, del].map((t) => t.name)).toEqual(["memory_search", "memory_add", "memory_update", "memory_delete"]);
      const added = JSON.parse((await add.execute(add.schema.parse({ content: "User prefers metric units", category: "preference", confidence: 0.9 }), toolRt)) as string);
      expect(added).toMatchObject({ status: "added" });
      const dup = (await add.execute(add.schema.parse({ content: "user prefers METRIC units" }), toolRt)) as { status: string; content: string };
      expect(dup.status).toBe("error");
      expect(dup.content).toContain("same content");
      const found = JSON.parse((await search.execute(search.schema.parse({ query: "which units?" }), toolRt)) as string);
      expect(found).toMatchObject({ count: 1, results: [{ id: added.fact_id, content: "User prefers metric units" }] });
      expect(JSON.parse((await update.execute(update.schema.parse({ fact_id: added.fact_id, confidence: 0.6 }), toolRt)) as string)).toEqual({ fact_id: added.fact_id, status: "updated" });
      expect(h.service.getMemory({ userId: "u", agentName: null }).facts[0].confidence).toBe(0.6);
      expect(((await update.execute(update.schema.parse({ fact_id: "fact_nope" }), toolRt)) as { status: string }).status).toBe("error");
      expect(JSON.parse((await del.execute(del.schema.parse({ fact_id: added.fact_id }), toolRt)) as string)).toMatchObject({ status: "deleted" });
      expect(h.service.getMemory({ userId: "u", agentName: null }).facts).toEqual([]);
    } finally {
      await h.dispose();
    }
  });
});
