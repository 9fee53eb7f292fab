import { z } from "zod";
import { messageText } from "../messages";
import type { AgentMiddleware, HookResult } from "../runtime/types";
import type { AgentState, PromotedState } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

const routeSchema = z.object({ priority: z.number().int().default(0), keywords: z.array(z.string()).default([]) });

/** Options of {@link createMcpRoutingMiddleware}. */
export const mcpRoutingOptionsSchema = z.object({
  /** Deferred tool name → its `prefer` routing hint. */
  routes: z.record(z.string(), routeSchema),
  /** Hash of the deferred catalog the promotions are recorded under. */
  catalogHash: z.string().min(1),
  /** `tool_search.auto_promote_top_k`, clamped to 1..5 (default 3). */
  topK: z
    .number()
    .int()
    .default(3)
    .transform((n) => Math.min(5, Math.max(1, n))),
});

/** Options of {@link createMcpRoutingMiddleware}. */
export type McpRoutingOptions = z.input<typeof mcpRoutingOptionsSchema>;

function latestUserText(messages: AgentState["messages"]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.type === "human" && m.additional_kwargs?.hide_from_ui !== true) return messageText(m);
  }
  return "";
}

/**
 * DeerFlow's `McpRoutingMiddleware`: before each model call, matches the
 * keywords of MCP routing hints (`routing.mode: prefer`) against the latest
 * real user message and promotes up to `topK` matching deferred tools
 * (higher priority first, then more keyword hits, then name), so the model
 * sees their schemas without a `tool_search` round trip. Never runs a tool.
 */
export function createMcpRoutingMiddleware(options: McpRoutingOptions): AgentMiddleware {
  const o = parseMiddlewareOptions("McpRoutingMiddleware", mcpRoutingOptionsSchema, options);
  const routes = Object.entries(o.routes).filter(([, r]) => r.keywords.some((k) => k.trim()));
  return {
    name: "McpRoutingMiddleware",
    beforeModel(state): HookResult {
      if (!routes.length) return undefined;
      const text = latestUserText(state.messages).toLowerCase();
      if (!text) return undefined;
      const promoted = (state as { promoted?: PromotedState | null }).promoted;
      const already = new Set(promoted && promoted.catalog_hash === o.catalogHash ? promoted.names : []);
      const hits = routes
        .map(([name, r]) => ({ name, priority: r.priority, hits: r.keywords.filter((k) => k.trim() && text.includes(k.trim().toLowerCase())).length }))
        .filter((h) => h.hits > 0 && !already.has(h.name))
        .sort((a, b) => b.priority - a.priority || b.hits - a.hits || (a.name < b.name ? -1 : 1))
        .slice(0, o.topK);
      if (!hits.length) return undefined;
      return { promoted: { catalog_hash: o.catalogHash, names: hits.map((h) => h.name) } };
    },
  };
}
