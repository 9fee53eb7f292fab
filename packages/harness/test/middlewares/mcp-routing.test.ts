import { describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import { createMcpRoutingMiddleware } from "../../src/middlewares";
import type { Runtime } from "../../src/runtime";

const routes = {
  pg_query: { priority: 100, keywords: ["SQL", "订单表"] },
  pg_tables: { priority: 50, keywords: ["table", "SQL"] },
  gh_search: { priority: 10, keywords: ["github"] },
  silent: { priority: 99, keywords: [" "] },
};
const run = (mw: ReturnType<typeof createMcpRoutingMiddleware>, state: unknown) => mw.beforeModel!(state as never, {} as Runtime);

describe("McpRoutingMiddleware", () => {
  it("promotes deferred tools whose keywords appear in the latest real user message, by priority, capped at topK", () => {
    const mw = createMcpRoutingMiddleware({ routes, catalogHash: "h", topK: 1 });
    const state = { messages: [humanMessage("check github"), humanMessage("run some sql on the orders table")] };
    expect(run(mw, state)).toEqual({ promoted: { catalog_hash: "h", names: ["pg_query"] } });
    expect(run(createMcpRoutingMiddleware({ routes, catalogHash: "h" }), state)).toEqual({ promoted: { catalog_hash: "h", names: ["pg_query", "pg_tables"] } });
  });

  it("matches non-Latin keywords, skips hidden messages and already promoted tools, never exceeds 5", () => {
    const mw = createMcpRoutingMiddleware({ routes, catalogHash: "h", topK: 50 });
    const hidden = humanMessage("github", { additional_kwargs: { hide_from_ui: true } });
    expect(run(mw, { messages: [humanMessage("查一下订单表"), hidden] })).toEqual({ promoted: { catalog_hash: "h", names: ["pg_query"] } });
    expect(run(mw, { messages: [humanMessage("SQL please")], promoted: { catalog_hash: "h", names: ["pg_query", "pg_tables"] } })).toBeUndefined();
    expect(run(mw, { messages: [humanMessage("nothing relevant")] })).toBeUndefined();
  });

  it("validates options", () => {
    expect(() => createMcpRoutingMiddleware({ routes, catalogHash: "" })).toThrow(/McpRoutingMiddleware/);
  });
});
