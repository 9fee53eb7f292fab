import { z } from "zod";
import type { AIMessage, Message, ToolMessage, UsageMetadata } from "../messages";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState, Todo } from "../state";
import { buildTokenUsageAttribution } from "./token-usage-attribution";
import { parseMiddlewareOptions } from "./zod-options";

/** `additional_kwargs` key holding a step's attribution. */
export const TOKEN_USAGE_ATTRIBUTION_KEY = "token_usage_attribution";
/** `additional_kwargs` key of a `task` ToolMessage carrying the sub-agent's usage. */
export const SUBAGENT_TOKEN_USAGE_KEY = "subagent_token_usage";
/** Marks a `task` ToolMessage whose usage was merged into its dispatching AI message. */
export const SUBAGENT_TOKEN_USAGE_ATTRIBUTED_KEY = "subagent_token_usage_attributed";

/** Run totals kept in `runtime.context.token_usage` (the gateway stores them on the run record). */
export interface RunTokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  llm_call_count: number;
}

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

/** The run totals in `context.token_usage` (created on first use). */
export function runTokenUsage(runtime: Pick<Runtime, "context">): RunTokenUsage {
  let u = runtime.context.token_usage as RunTokenUsage | undefined;
  if (!u || typeof u !== "object") {
    u = { input_tokens: 0, output_tokens: 0, total_tokens: 0, llm_call_count: 0 };
    runtime.context.token_usage = u;
  }
  return u;
}

/**
 * DeerFlow's `TokenUsageMiddleware` (after_model):
 * - adds the last AI message's `usage_metadata` to the run totals in
 *   `runtime.context.token_usage` (each message id counted once per run);
 * - merges sub-agent usage from `task` ToolMessages (`subagent_token_usage`)
 *   into the dispatching AI message once (`subagent_token_usage_attributed`);
 * - stamps `additional_kwargs.token_usage_attribution` on the AI message.
 */
export function createTokenUsageMiddleware(options: TokenUsageOptions = {}): AgentMiddleware {
  const o = parseMiddlewareOptions("TokenUsageMiddleware", tokenUsageOptionsSchema, options);
  const counted = new Map<string, Set<string>>();

  return {
    name: "TokenUsageMiddleware",
    beforeAgent(_state, runtime) {
      if (!o.enabled) return;
      counted.set(runtime.runId, new Set());
      while (counted.size > 1000) counted.delete(counted.keys().next().value as string);
      runTokenUsage(runtime);
    },
    afterAgent(_state, runtime) {
      counted.delete(runtime.runId);
    },
    afterModel(state: AgentState, runtime): HookResult {
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
        const seen = counted.get(runtime.runId) ?? new Set<string>();
        counted.set(runtime.runId, seen);
        const key = last.id ?? `#${messages.length - 1}`;
        if (!seen.has(key)) {
          seen.add(key);
          const totals = runTokenUsage(runtime);
          totals.llm_call_count += 1;
          const u = normaliseUsage(last.usage_metadata);
          if (u) {
            totals.input_tokens += u.input_tokens;
            totals.output_tokens += u.output_tokens;
            totals.total_tokens += u.total_tokens;
          }
        }
        const attribution = buildTokenUsageAttribution(last, Array.isArray(state.todos) ? (state.todos as Todo[]) : []);
        if (JSON.stringify(last.additional_kwargs?.[TOKEN_USAGE_ATTRIBUTION_KEY]) !== JSON.stringify(attribution)) {
          updates.set(messages.length - 1, { ...last, additional_kwargs: { ...last.additional_kwargs, [TOKEN_USAGE_ATTRIBUTION_KEY]: attribution } });
        }
      }
      if (!updates.size) return;
      return { messages: [...updates.keys()].sort((a, b) => a - b).map((i) => updates.get(i) as Message) };
    },
  };
}
