import type { RunUsage } from "../persistence";
import type { ClientUsage } from "./types";

/**
 * A run record's token accounting as the clients' `end` event reports it:
 * the record's totals (lead agent, sub-agents and middleware model calls) and
 * the split by caller, the figures `GET /api/threads/{id}/token-usage` sums.
 */
export function clientUsageOfRun(usage: RunUsage): ClientUsage {
  return {
    input_tokens: usage.totalInputTokens,
    output_tokens: usage.totalOutputTokens,
    total_tokens: usage.totalTokens,
    by_caller: { lead_agent: usage.leadAgentTokens, subagent: usage.subagentTokens, middleware: usage.middlewareTokens },
  };
}

/**
 * The same from the gateway's run response (`GET /api/threads/{id}/runs/{run_id}`),
 * or undefined when the response carries no token fields (an older gateway).
 */
export function clientUsageOfRunResponse(rec: Record<string, unknown>): ClientUsage | undefined {
  const n = (key: string): number | undefined => (typeof rec[key] === "number" ? (rec[key] as number) : undefined);
  const total = n("total_tokens");
  if (total === undefined) return undefined;
  return {
    input_tokens: n("total_input_tokens") ?? 0,
    output_tokens: n("total_output_tokens") ?? 0,
    total_tokens: total,
    by_caller: { lead_agent: n("lead_agent_tokens") ?? 0, subagent: n("subagent_tokens") ?? 0, middleware: n("middleware_tokens") ?? 0 },
  };
}
