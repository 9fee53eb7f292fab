import type { McpServerConfig } from "../config";

/** Effective routing hint of one MCP tool. */
export interface McpRoutingConfig {
  mode: "off" | "prefer";
  priority: number;
  keywords: string[];
}

/** Server-level routing with the keys a `tools.<original name>.routing` override sets replaced (DeerFlow's merge). */
export function effectiveRouting(server: McpServerConfig, tool: string): McpRoutingConfig {
  const base: McpRoutingConfig = { mode: server.routing.mode, priority: server.routing.priority, keywords: [...server.routing.keywords] };
  const o = server.tools[tool]?.routing;
  if (!o) return base;
  return { mode: o.mode ?? base.mode, priority: o.priority ?? base.priority, keywords: o.keywords ? [...o.keywords] : base.keywords };
}

/** One tool's routing hint, as {@link mcpRoutingHints} renders it. */
export interface McpRoutingHint {
  tool: string;
  priority: number;
  keywords: string[];
  /** The tool is deferred: the hint points the model at `tool_search` first. */
  deferred: boolean;
}

function keywordList(keywords: string[]): string {
  return keywords.length === 1 ? keywords[0] : `${keywords.slice(0, -1).join(", ")}, or ${keywords.at(-1)}`;
}

/**
 * The `<mcp_routing_hints>` prompt section: for each MCP tool with a
 * `prefer` hint, when to prefer it (highest priority first). A deferred tool
 * is named through `tool_search`, since its schema is hidden until promoted.
 * `escape` makes server-provided names and keywords inert in the prompt.
 */
export function mcpRoutingHints(hints: readonly McpRoutingHint[], escape: (s: string) => string): string {
  const usable = hints.filter((h) => h.keywords.some((k) => k.trim()));
  if (!usable.length) return "";
  const lines = ["<mcp_routing_hints>"];
  for (const h of [...usable].sort((a, b) => b.priority - a.priority || (a.tool < b.tool ? -1 : 1))) {
    const name = escape(h.tool);
    lines.push(`When the user's request involves ${keywordList(h.keywords.filter((k) => k.trim()).map(escape))}:`);
    lines.push(h.deferred ? `  use \`tool_search\` to fetch \`${name}\`, then prefer that MCP tool.` : `  prefer the \`${name}\` tool.`);
  }
  lines.push("</mcp_routing_hints>");
  return lines.join("\n");
}
