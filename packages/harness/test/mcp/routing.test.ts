import { describe, expect, it } from "vitest";
import { escapePromptData } from "../../src/agents/prompt";
import { mcpServerConfigSchema } from "../../src/config";
import { effectiveRouting, mcpRoutingHints } from "../../src/mcp";

describe("MCP routing hints", () => {
  it("a per-tool override replaces only the keys it sets (an explicit off turns the tool's hint off)", () => {
    const server = mcpServerConfigSchema.parse({
      command: "npx",
      routing: { mode: "prefer", priority: 50, keywords: ["database", "SQL"] },
      tools: { query: { routing: { priority: 100, keywords: ["订单表"] } }, other: { routing: { mode: "off" } }, plain: {} },
    });
    expect(effectiveRouting(server, "query")).toEqual({ mode: "prefer", priority: 100, keywords: ["订单表"] });
    expect(effectiveRouting(server, "other")).toEqual({ mode: "off", priority: 50, keywords: ["database", "SQL"] });
    expect(effectiveRouting(server, "plain")).toEqual({ mode: "prefer", priority: 50, keywords: ["database", "SQL"] });
    expect(effectiveRouting(mcpServerConfigSchema.parse({ command: "npx" }), "x").mode).toBe("off");
  });

  it("renders by priority, points deferred tools at tool_search, escapes server text", () => {
    const text = mcpRoutingHints(
      [
        { tool: "pg_tables", priority: 50, keywords: ["table", "SQL"], deferred: false },
        { tool: "pg_query", priority: 100, keywords: ["<b>orders</b>", "SQL", "metrics"], deferred: true },
        { tool: "silent", priority: 99, keywords: [" "], deferred: false },
      ],
      escapePromptData,
    );
    expect(text).toBe(
      [
        "<mcp_routing_hints>",
        "When the user's request involves &lt;b&gt;orders&lt;/b&gt;, SQL, or metrics:",
        "  use `tool_search` to fetch `pg_query`, then prefer that MCP tool.",
        "When the user's request involves table, or SQL:",
        "  prefer the `pg_tables` tool.",
        "</mcp_routing_hints>",
      ].join("\n"),
    );
    expect(mcpRoutingHints([], escapePromptData)).toBe("");
  });
});
