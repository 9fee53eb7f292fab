import { z } from "zod";
import { humanMessage } from "../messages";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState } from "../state";
import { stripToolCalls } from "./loop-detection-strip";
import { parseMiddlewareOptions } from "./zod-options";

/** `token_budget:` config section (DeerFlow's `TokenBudgetConfig`). */
export const tokenBudgetOptionsSchema = z
  .object({
    enabled: z.boolean().default(false),
    max_tokens: z.number().int().min(1).default(200000),
    max_input_tokens: z.number().int().min(1).nullish(),
    max_output_tokens: z.number().int().min(1).nullish(),
    warn_threshold: z.number().gt(0).max(1).default(0.8),
    hard_stop_threshold: z.number().gt(0).default(1.0),
  })
  .superRefine((o, ctx) => {
    if (o.hard_stop_threshold < o.warn_threshold) {
      ctx.addIssue({ code: "custom", path: ["hard_stop_threshold"], message: "hard_stop_threshold must be >= warn_threshold" });
    }
  });

/** Options of {@link createTokenBudgetMiddleware}. */
export type TokenBudgetOptions = z.input<typeof tokenBudgetOptionsSchema>;

const fmt = (n: number) => n.toLocaleString("en-US");

/** The warning queued at `warn_threshold` (injected at the next model call). */
export function tokenBudgetWarning(reason: string, used: number, budget: number, fraction: number): string {
  return `[TOKEN BUDGET WARNING] You have used ${fmt(used)} of your ${fmt(budget)} ${reason} token budget (${Math.round(fraction * 100)}%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.`;
}

/** The text appended to the forced final answer at `hard_stop_threshold`. */
export function tokenBudgetExceeded(reason: string, used: number, budget: number): string {
  return `[TOKEN BUDGET EXCEEDED] The ${reason} token usage (${fmt(used)}) has exceeded the safety limit (${fmt(budget)}). Producing final answer with results collected so far.`;
}

interface RunTrack {
  seen: Map<string, [number, number]>;
  input: number;
  output: number;
  total: number;
  warned: boolean;
  pending: string[];
}

const MAX_TRACKED_RUNS = 1000;

/**
 * DeerFlow's `TokenBudgetMiddleware` (off unless `enabled`): sums the
 * `usage_metadata` of AI messages produced during this run (messages present
 * before the run do not count). At `warn_threshold` of the largest
 * total/input/output fraction it queues a `[TOKEN BUDGET WARNING]` human
 * message (name `budget_warning`) for the next model request; at
 * `hard_stop_threshold` it strips the last AI message's tool calls, appends
 * `[TOKEN BUDGET EXCEEDED] …` and sets the outcome's stop reason `token_capped`.
 */
export function createTokenBudgetMiddleware(options: TokenBudgetOptions = {}): AgentMiddleware {
  const o = parseMiddlewareOptions("TokenBudgetMiddleware", tokenBudgetOptionsSchema, options);
  const runs = new Map<string, RunTrack>();

  function runTrack(runId: string): RunTrack {
    let t = runs.get(runId);
    if (!t) {
      t = { seen: new Map(), input: 0, output: 0, total: 0, warned: false, pending: [] };
      runs.set(runId, t);
      while (runs.size > MAX_TRACKED_RUNS) runs.delete(runs.keys().next().value as string);
    }
    return t;
  }

  return {
    name: "TokenBudgetMiddleware",
    beforeAgent(state: AgentState, runtime: Runtime) {
      if (!o.enabled) return;
      const t = runTrack(runtime.runId);
      for (const m of state.messages) {
        if (m.type === "ai" && m.id) t.seen.set(m.id, [m.usage_metadata?.input_tokens ?? 0, m.usage_metadata?.output_tokens ?? 0]);
      }
    },
    afterModel(state: AgentState, runtime: Runtime): HookResult {
      if (!o.enabled) return;
      const last = state.messages[state.messages.length - 1];
      if (!last || last.type !== "ai") return;
      const t = runTrack(runtime.runId);
      for (const m of state.messages) {
        if (m.type !== "ai" || !m.id) continue;
        const inp = m.usage_metadata?.input_tokens ?? 0;
        const out = m.usage_metadata?.output_tokens ?? 0;
        const [pi, po] = t.seen.get(m.id) ?? [0, 0];
        const di = Math.max(0, inp - pi);
        const dout = Math.max(0, out - po);
        if (di > 0 || dout > 0) {
          t.input += di;
          t.output += dout;
          t.total += di + dout;
          t.seen.set(m.id, [inp, out]);
        }
      }
      if (t.total <= 0) return;
      const candidates: Array<[string, number, number]> = [["total", t.total, o.max_tokens]];
      if (o.max_input_tokens) candidates.push(["input", t.input, o.max_input_tokens]);
      if (o.max_output_tokens) candidates.push(["output", t.output, o.max_output_tokens]);
      let best: [string, number, number] | null = null;
      let fraction = 0;
      for (const c of candidates) {
        const f = c[1] / c[2];
        if (f > fraction) {
          fraction = f;
          best = c;
        }
      }
      if (!best) return;
      const [reason, used, budget] = best;
      if (fraction >= o.hard_stop_threshold) {
        runtime.outcome.setStopReason("token_capped", { overwrite: true });
        return { messages: [stripToolCalls(last, tokenBudgetExceeded(reason, used, budget))] };
      }
      if (fraction >= o.warn_threshold && !t.warned) {
        t.warned = true;
        t.pending.push(tokenBudgetWarning(reason, used, budget, fraction));
      }
      return;
    },
    afterAgent(_state, runtime) {
      if (o.enabled) runs.delete(runtime.runId);
    },
    async wrapModelCall(request, handler) {
      const t = o.enabled ? runs.get(request.runtime.runId) : undefined;
      if (!t || t.pending.length === 0) return handler(request);
      const text = t.pending.join("\n\n");
      t.pending = [];
      return handler({ ...request, messages: [...request.messages, humanMessage(text, { name: "budget_warning" })] });
    },
  };
}
