import type { McpServerConfig } from "../config";

/** Effective routing hint of one MCP tool. */
export interface McpRoutingConfig {
  mode: "off" | "prefer";
  priority: number;
  keywords: string[];
}

/** Server-level routing, overridden key by key by `tools.<original name>.routing` when that is not `off`. */
export function effectiveRouting(server: McpServerConfig, tool: string): McpRoutingConfig {
  const base: McpRoutingConfig = { mode: server.routing.mode, priority: server.routing.priority, keywords: [...server.routing.keywords] };
  const override = server.tools[tool]?.routing;
  if (!override || override.mode === "off") return base;
  return { mode: override.mode, priority: override.priority, keywords: override.keywords.length ? [...override.keywords] : base.keywords };
}
