import { z } from "zod";
import type { AIMessage } from "../messages";
import type { AgentMiddleware, HookResult } from "../runtime/types";
import { threadStateSchema } from "../state";
import type { DelegationEntry } from "../state";
import { countRunDelegations } from "../subagents/delegation-ledger";
import { appendToContent } from "./loop-detection-strip";
import { parseMiddlewareOptions } from "./zod-options";

/** Appended to the response when the run's delegation budget is used up. */
export const SUBAGENT_LIMIT_REACHED_MESSAGE =
  "[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached. " +
  "Continue using the subagent results already collected, execute remaining simple work " +
  "directly, or summarize the remaining work instead of launching more subagents.";

/** Stop reason recorded when the per-run cap is exhausted. */
export const SUBAGENT_LIMIT_CAPPED_STOP_REASON = "subagent_limit_capped";

const clampInt = (lo: number, hi: number, def: number) =>
  z
    .number()
    .finite()
    .default(def)
    .transform((n) => Math.min(hi, Math.max(lo, Math.trunc(n))));

const optionsSchema = z
  .object({
    /** Task calls kept per model response (clamped to 1–4). */
    max_concurrent: clampInt(1, 4, 3),
    /** Task calls per run, counted over the delegation ledger entries of this run (clamped to 1–50). */
    max_total: clampInt(1, 50, 6),
  })
  .strict();

/** Options of {@link createSubagentLimitMiddleware}. */
export type SubagentLimitOptions = z.input<typeof optionsSchema>;

/**
 * SubagentLimit (DeerFlow chain #27, after_model): keeps the first
 * `min(max_concurrent, max_total − this run's delegations)` `task` calls of
 * a response and truncates the rest (never queued). When the run's budget is
 * exhausted every `task` call is stripped, the limit note is appended, a
 * response left without tool calls finishes with `stop`, and the run's stop
 * reason becomes `subagent_limit_capped`. The run's delegations are the
 * ledger entries (`state.delegations`) tagged with this run id, so
 * DurableContext must be in the chain for the per-run cap.
 */
export function createSubagentLimitMiddleware(options: SubagentLimitOptions = {}): AgentMiddleware {
  const o = parseMiddlewareOptions("SubagentLimitMiddleware", optionsSchema, options);
  return {
    name: "SubagentLimitMiddleware",
    stateSchema: { delegations: threadStateSchema.delegations },
    afterModel(state, runtime): HookResult {
      const last = state.messages[state.messages.length - 1];
      if (!last || last.type !== "ai") return undefined;
      const ai = last as AIMessage;
      const taskIdx = ai.tool_calls.map((c, i) => (c.name === "task" ? i : -1)).filter((i) => i >= 0);
      if (!taskIdx.length) return undefined;
      const prior = countRunDelegations((state as { delegations?: DelegationEntry[] }).delegations, runtime.runId);
      const remaining = Math.max(0, o.max_total - prior);
      const allowed = Math.min(o.max_concurrent, remaining);
      if (taskIdx.length <= allowed) return undefined;
      const drop = new Set(taskIdx.slice(allowed));
      const kept = ai.tool_calls.filter((_, i) => !drop.has(i));
      const keptIds = new Set(kept.map((c) => c.id));
      const additional_kwargs = { ...ai.additional_kwargs };
      // Providers may keep the raw calls too; they must agree with `tool_calls` or the next request replays dropped calls.
      const raw = additional_kwargs.tool_calls;
      if (Array.isArray(raw)) additional_kwargs.tool_calls = raw.filter((r) => keptIds.has((r as { id?: string })?.id as string));
      const response_metadata = { ...(ai.response_metadata ?? {}) };
      if (!kept.length && response_metadata.finish_reason === "tool_calls") response_metadata.finish_reason = "stop";
      if (remaining === 0) runtime.outcome.setStopReason(SUBAGENT_LIMIT_CAPPED_STOP_REASON);
      const next: AIMessage = {
        ...ai,
        tool_calls: kept,
        additional_kwargs,
        response_metadata,
        content: remaining === 0 ? appendToContent(ai.content, SUBAGENT_LIMIT_REACHED_MESSAGE) : ai.content,
      };
      return { messages: [next] };
    },
  };
}
