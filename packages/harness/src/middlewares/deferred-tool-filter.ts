import { z } from "zod";
import { toolMessage } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import type { AgentState, PromotedState } from "../state";
import { parseMiddlewareOptions } from "./zod-options";

/** Options of {@link createDeferredToolFilterMiddleware} (from `assembleDeferredTools`). */
export const deferredToolFilterOptionsSchema = z.object({
  /** Names of the deferred tools (their schemas are withheld until promoted). */
  deferredNames: z.array(z.string().min(1)),
  /** Hash of the deferred catalog; promotions recorded under another hash do not count. */
  catalogHash: z.string().min(1),
});

/** Options of {@link createDeferredToolFilterMiddleware}. */
export type DeferredToolFilterOptions = z.input<typeof deferredToolFilterOptionsSchema>;

/** DeerFlow's refusal for a call to a deferred tool that `tool_search` has not promoted. */
export function deferredToolRefusal(name: string): string {
  return `Error: Tool '${name}' is deferred and has not been promoted yet. Call tool_search first to expose and promote this tool's schema, then retry.`;
}

/**
 * DeerFlow's `DeferredToolFilterMiddleware`: removes deferred (MCP) tools
 * that are not in `state.promoted` (for the current catalog hash) from each
 * model request, and refuses calls to them with guidance to use
 * `tool_search`. Promotions live in the `promoted` state channel, so they
 * survive checkpoints and later turns of the thread.
 */
export function createDeferredToolFilterMiddleware(options: DeferredToolFilterOptions): AgentMiddleware {
  const o = parseMiddlewareOptions("DeferredToolFilterMiddleware", deferredToolFilterOptionsSchema, options);
  const deferred = new Set(o.deferredNames);
  const hidden = (state: AgentState): Set<string> => {
    const promoted = (state as { promoted?: PromotedState | null }).promoted;
    const ok = promoted && promoted.catalog_hash === o.catalogHash ? new Set(promoted.names) : new Set<string>();
    return new Set([...deferred].filter((n) => !ok.has(n)));
  };
  return {
    name: "DeferredToolFilterMiddleware",
    async wrapModelCall(request, handler) {
      if (!deferred.size) return handler(request);
      const hide = hidden(request.state);
      if (!hide.size) return handler(request);
      return handler({ ...request, tools: request.tools.filter((t) => !hide.has(t.name)) });
    },
    async wrapToolCall(request, handler) {
      const name = request.toolCall.name;
      if (!deferred.has(name) || !hidden(request.state).has(name)) return handler(request);
      return toolMessage(deferredToolRefusal(name), { tool_call_id: request.toolCall.id, name, status: "error" });
    },
  };
}
