import { describe, expect, it } from "vitest";
import { aiMessage } from "../../src/messages";
import { createDeferredToolFilterMiddleware, deferredToolRefusal } from "../../src/middlewares";
import type { ModelCallRequest, ToolCallRequest } from "../../src/runtime";
import { tool } from "../../src/tools";
import { z } from "zod";

const mk = (name: string) => tool({ name, description: name, schema: z.object({}), execute: () => "ok" });
const tools = [mk("read_file"), mk("gh_search"), mk("gh_issue"), mk("tool_search")];

describe("DeferredToolFilterMiddleware", () => {
  const mw = createDeferredToolFilterMiddleware({ deferredNames: ["gh_search", "gh_issue"], catalogHash: "h1" });

  it("validates options at construction", () => {
    expect(() => createDeferredToolFilterMiddleware({ deferredNames: ["x"], catalogHash: "" })).toThrow(/catalogHash/);
  });

  it("withholds unpromoted deferred schemas; promotions under another hash do not count", async () => {
    const seen: string[][] = [];
    const handler = async (r: ModelCallRequest) => {
      seen.push(r.tools.map((t) => t.name));
      return aiMessage("done");
    };
    const req = (promoted: unknown) => ({ tools, messages: [], state: { messages: [], promoted } }) as unknown as ModelCallRequest;
    await mw.wrapModelCall!(req(null), handler);
    await mw.wrapModelCall!(req({ catalog_hash: "h1", names: ["gh_issue"] }), handler);
    await mw.wrapModelCall!(req({ catalog_hash: "stale", names: ["gh_issue", "gh_search"] }), handler);
    expect(seen).toEqual([
      ["read_file", "tool_search"],
      ["read_file", "gh_issue", "tool_search"],
      ["read_file", "tool_search"],
    ]);
  });

  it("refuses a call to an unpromoted deferred tool with guidance, passes promoted and ordinary tools", async () => {
    const call = (name: string, promoted: unknown) =>
      mw.wrapToolCall!({ toolCall: { id: "c", name, args: {} }, state: { messages: [], promoted } } as unknown as ToolCallRequest, async () => ({ type: "tool", content: "ran", tool_call_id: "c" }) as never);
    expect(await call("gh_search", null)).toMatchObject({ status: "error", content: deferredToolRefusal("gh_search"), name: "gh_search", tool_call_id: "c" });
    expect(await call("gh_search", { catalog_hash: "h1", names: ["gh_search"] })).toMatchObject({ content: "ran" });
    expect(await call("read_file", null)).toMatchObject({ content: "ran" });
  });
});
