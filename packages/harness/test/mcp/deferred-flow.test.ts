import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import { assembleDeferredTools, DeferredToolCatalog } from "../../src/mcp";
import { createDeferredToolFilterMiddleware } from "../../src/middlewares";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import type { ToolDefinition } from "../../src/tools";
import { FIXTURES, makePool, nodeServer } from "./_helpers";
import type { PoolHarness } from "./_helpers";

describe("deferred MCP tools with tool_search, end to end", () => {
  let h: PoolHarness;
  let mcpTools: ToolDefinition[];
  beforeAll(async () => {
    h = makePool({ rich: nodeServer(path.join(FIXTURES, "rich-server.mjs")) });
    mcpTools = await h.pool.getTools({ userId: "u1", threadId: "th-deferred" });
  });
  afterAll(() => h.cleanup());

  it("hides schemas, refuses unpromoted calls, promotes through tool_search, and keeps promotions across runs", async () => {
    const setup = assembleDeferredTools(mcpTools, { enabled: true });
    expect(setup.deferredNames).toContain("rich_structured");
    expect(setup.tools.map((t) => t.name)).toContain("tool_search");
    const model = new ScriptedModel([
      { toolCalls: [{ name: "rich_structured", args: { a: 1, b: 2 }, id: "c1" }] },
      { toolCalls: [{ name: "tool_search", args: { query: "select:rich_structured" }, id: "c2" }] },
      { toolCalls: [{ name: "rich_structured", args: { a: 1, b: 2 }, id: "c3" }] },
      "The sum is 3.",
      "Second run answer.",
    ]);
    const store = new MemoryCheckpointStore();
    const agent = createAgent({
      model,
      tools: setup.tools,
      middleware: [createDeferredToolFilterMiddleware({ deferredNames: setup.deferredNames, catalogHash: setup.catalogHash! })],
      stateSchema: threadStateSchema,
      checkpointer: store,
    });
    const r1 = await agent.invoke({ messages: [{ type: "human", content: "add 1 and 2" }] }, { threadId: "th-deferred", context: { user_id: "u1" } });
    expect(r1.status).toBe("success");
    const toolNames = (i: number) => model.requests[i].tools.map((t) => t.name);
    expect(toolNames(0)).toEqual(["tool_search"]);
    const msgs = r1.state.messages.filter((m) => m.type === "tool") as Array<{ content: unknown; status: string; tool_call_id: string }>;
    expect(msgs[0]).toMatchObject({ status: "error", tool_call_id: "c1" });
    expect(String(msgs[0].content)).toBe("Error: Tool 'rich_structured' is deferred and has not been promoted yet. Call tool_search first to expose and promote this tool's schema, then retry.");
    const found = JSON.parse(String(msgs[1].content)) as Array<{ name: string; parameters: { type: string } }>;
    expect(found.map((f) => f.name)).toEqual(["rich_structured"]);
    expect(found[0].parameters.type).toBe("object");
    expect(toolNames(2).sort()).toEqual(["rich_structured", "tool_search"]);
    expect(msgs[2]).toMatchObject({ status: "success", content: '{"sum":3}' });
    expect((r1.state as { promoted?: unknown }).promoted).toEqual({ catalog_hash: setup.catalogHash, names: ["rich_structured"] });

    // A new run on the same thread starts from the checkpoint: the promotion is still there.
    const r2 = await agent.invoke({ messages: [{ type: "human", content: "again" }] }, { threadId: "th-deferred", context: { user_id: "u1" } });
    expect(r2.status).toBe("success");
    expect(toolNames(4).sort()).toEqual(["rich_structured", "tool_search"]);
    model.assertComplete();
  });

  it("searches by keywords (top 5, name hits first), +required terms and reports no match", async () => {
    const catalog = new DeferredToolCatalog(mcpTools);
    expect((await catalog.search("select:rich_big,rich_image,nope")).map((t) => t.name)).toEqual(["rich_big", "rich_image"]);
    expect((await catalog.search("image")).map((t) => t.name)[0]).toBe("rich_image");
    expect((await catalog.search("rich")).length).toBe(5);
    expect((await catalog.search("+write report")).map((t) => t.name)).toEqual(["rich_write_report"]);
    expect((await catalog.search("+"))).toEqual([]);
    expect((await catalog.search("(("))).toEqual([]); // invalid pattern → literal, no throw
    const setup = assembleDeferredTools(mcpTools, { enabled: true });
    const res = (await setup.toolSearch!.execute({ query: "zzz" }, { toolCallId: "x" } as never)) as { update: { messages: Array<{ content: string }>; promoted: unknown } };
    expect(res.update.messages[0].content).toBe("No tools found matching: zzz");
  });

  it("a catastrophically backtracking query fails that call within the budget, not the gateway's event loop", async () => {
    const long = { ...mcpTools[0], name: "rich_long", description: "a".repeat(60) };
    const catalog = new DeferredToolCatalog([...mcpTools, long]);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    try {
      const err = await catalog.search("(a*)*b").catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe("pattern_too_slow");
      const ranked = await catalog.search("+rich (a|a)*c").catch((e: unknown) => e);
      expect((ranked as { code?: string }).code).toBe("pattern_too_slow");
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
  }, 30_000);

  it("defers nothing when tool_search is disabled or there is no MCP tool", () => {
    expect(assembleDeferredTools(mcpTools, { enabled: false })).toMatchObject({ deferredNames: [], catalogHash: null });
    const plain = mcpTools.map((t) => ({ ...t, metadata: {} }));
    expect(assembleDeferredTools(plain, { enabled: true }).tools.map((t) => t.name)).not.toContain("tool_search");
  });

  it("a catalog change (different hash) voids old promotions", () => {
    const a = new DeferredToolCatalog(mcpTools);
    const b = new DeferredToolCatalog(mcpTools.slice(1));
    expect(a.hash).not.toBe(b.hash);
    expect(new DeferredToolCatalog([...mcpTools].reverse()).hash).toBe(a.hash);
  });
});
