import { attachMcp, assembleDeferredTools, deferredRoutingIndex, mcpRoutingHints, routingHintsOf } from "../mcp";
import type { DeferredToolSetup, McpPool } from "../mcp";
import { createDeferredToolFilterMiddleware, createMcpRoutingMiddleware } from "../middlewares";
import { escapeXmlText } from "../text";
import { SLOT } from "./chain-slots";
import type { SlottedMiddleware } from "./chain-slots";
import type { Capability } from "./types";

/**
 * MCP servers: the runtime's pool (sessions closed with a deleted thread and
 * with the runtime). In an agent: the servers' tools (a failing server only
 * lacks its own), deferred behind `tool_search` when `tool_search.enabled`
 * (the McpRouting and DeferredToolFilter middlewares, in sub-agents too, and
 * the deferred-tools and routing-hints prompt sections).
 */
export const mcpCapability: Capability<McpPool, "mcp"> = {
  name: "mcp",
  attach(host, options) {
    const { pool, threadDeleted, close } = attachMcp(host, { cwd: options.cwd, log: options.log });
    return { service: pool, threadDeleted, close };
  },
  async forAgent(ctx, pool) {
    const toolSearch = ctx.config.tool_search as { enabled?: boolean; auto_promote_top_k?: unknown } | undefined;
    const tools = pool
      ? await pool.getTools().catch((err: unknown) => {
          ctx.warn(`MCP tools are unavailable for this run: ${(err as Error).message}`);
          return [];
        })
      : [];
    // Deferral looks at every candidate (an extra tool can be an MCP tool too), so it runs even without a pool.
    let setup: DeferredToolSetup | undefined;
    return {
      tools,
      arrangeTools(candidates) {
        setup = assembleDeferredTools(candidates, { enabled: toolSearch?.enabled === true });
        return setup.tools;
      },
      middlewares() {
        if (!setup?.catalogHash) return [];
        const out: SlottedMiddleware[] = [];
        const routes = deferredRoutingIndex(setup);
        const topK = Number(toolSearch?.auto_promote_top_k ?? 3);
        if (Object.keys(routes).length > 0) out.push({ slot: SLOT.McpRouting, middleware: createMcpRoutingMiddleware({ routes, catalogHash: setup.catalogHash, topK }) });
        if (setup.deferredNames.length > 0) out.push({ slot: SLOT.DeferredToolFilter, middleware: createDeferredToolFilterMiddleware({ deferredNames: setup.deferredNames, catalogHash: setup.catalogHash }) });
        return out;
      },
      promptSections(finalTools) {
        const deferredNames = setup?.deferredNames ?? [];
        return { deferredTools: deferredNames, mcpRoutingHints: mcpRoutingHints(routingHintsOf(finalTools, deferredNames), escapeXmlText) };
      },
    };
  },
};
