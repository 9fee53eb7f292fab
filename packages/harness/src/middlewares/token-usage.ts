import { z } from "zod";
import type { AIMessage, Message, ToolMessage, UsageMetadata } from "../messages";
import type { AgentMiddleware, HookResult } from "../runtime/types";
import type { AgentState, Todo } from "../state";
import { buildTokenUsageAttribution } from "./token-usage-attribution";
import { parseMiddlewareOptions } from "./zod-options";

/** `additional_kwargs` key holding a step's attribution. */
export const TOKEN_USAGE_ATTRIBUTION_KEY = "token_usage_attribution";
/** `additional_kwargs` key of a `task` ToolMessage carrying the sub-agent's usage. */
export const SUBAGENT_TOKEN_USAGE_KEY = "subagent_token_usage";
/** Marks a `task` ToolMessage whose usage was merged into its dispatching AI message. */
export const SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY = "subagent_token_usage_attributed";

/** `token_usage:` config section. */
export const tokenUsageOptionsSchema = z.object({ enabled: z.boolean().default(true) });

/** Options of {@link createTokenUsageMiddleware}. */
export type TokenUsageOptions = z.input<typeof tokenUsageOptionsSchema>;

function normaliseUsage(v: unknown): { input_tokens: number; output_tokens: number; total_tokens: number } | null {
  if (!v || typeof v !== "object") return null;
  const r = v as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? Math.trunc(x) : 0);
  const input = num(r.input_tokens);
  const output = num(r.output_tokens);
  const total = num(r.total_tokens) || input + output;
  if (!input && !output && !total) return null;
  return { input_tokens: input, output_tokens: output, total_tokens: total };
}

/**
 * DeerFlow's `TokenUsageMiddleware` (after_model). The run's token totals
 * are kept by the runtime itself, per model call, in `RunResult.outcome`;
 * this middleware only annotates messages:
 * - merges sub-agent usage from `task` ToolMessages (`subagent_token_usage`)
 *   into the dispatching AI message once (`subagent_token_usage_attributed`);
 * - stamps `additional_kwargs.token_usage_attribution` on the AI message.
 */
export function createTokenUsageMiddleware(options: TokenUsageOptions = {}): AgentMiddleware {
  const o = parseMiddlewareOptions("TokenUsageMiddleware", tokenUsageOptionsSchema, options);
  return {
    name: "TokenUsageMiddleware",
    afterModel(state: AgentState): HookResult {
      if (!o.enabled) return;
      const messages = state.messages;
      if (!messages.length) return;
      const updates = new Map<number, Message>();
      for (let idx = messages.length - 2; idx >= 0; idx--) {
        const tm = messages[idx];
        if (tm.type !== "tool" || !tm.tool_call_id) break;
        if (tm.additional_kwargs?.[SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY] === true) continue;
        const sub = normaliseUsage(tm.additional_kwargs?.[SUBAGENT_TOKEN_USAGE_KEY]);
        if (!sub) continue;
        for (let d = idx - 1; d >= 0; d--) {
          const cand = messages[d];
          if (cand.type !== "ai" || !cand.tool_calls.some((c) => c.id === tm.tool_call_id)) continue;
          const base = (updates.get(d) as AIMessage | undefined) ?? cand;
          const prev: Partial<UsageMetadata> = base.usage_metadata ?? {};
          updates.set(d, {
            ...base,
            usage_metadata: {
              ...prev,
              input_tokens: (prev.input_tokens ?? 0) + sub.input_tokens,
              output_tokens: (prev.output_tokens ?? 0) + sub.output_tokens,
              total_tokens: (prev.total_tokens ?? 0) + sub.total_tokens,
            },
          });
          updates.set(idx, { ...(tm as ToolMessage), additional_kwargs: { ...tm.additional_kwargs, [SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY]: true } });
          break;
        }
      }
      const last = messages[messages.length - 1];
      if (last.type === "ai") {
        const attribution = buildTokenUsageAttribution(last, Array.isArray(state.todos) ? (state.todos as Todo[]) : []);
        const stamped = last.additional_kwargs?.[TOKEN_USAGE_ATTRIBUTION_KEY];
        // A fresh AI message has no attribution yet: no need to serialise the new one to see that it differs.
        if (stamped === undefined || JSON.stringify(stamped) !== JSON.stringify(attribution)) {
          updates.set(messages.length - 1, { ...last, additional_kwargs: { ...last.additional_kwargs, [TOKEN_USAGE_ATTRIBUTION_KEY]: attribution } });
        }
      }
      if (!updates.size) return;
      return { messages: [...updates.keys()].sort((a, b) => a - b).map((i) => updates.get(i) as Message) };
    },
  };
}
