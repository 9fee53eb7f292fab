import type { Message } from "@deerflow-ts/harness";
import type { RunRecord } from "@deerflow-ts/harness";
import { approximateTokenCounter } from "@deerflow-ts/harness/middlewares";
import type { Hono } from "hono";
import type { GatewayContext } from "../context";
import { costOf } from "../observability/pricing";
import type { ModelPricing } from "../observability/pricing";
import { checkThreadId } from "../validate";
import { readableThreadId } from "./thread-access";

/** `context_usage` of the token-usage answer, as DeerFlow's context badge reads it. */
export interface ThreadContextUsage {
  token_count: number;
  max_context_tokens: number | null;
  percentage: number | null;
}

/** A configured model as the route reads it. */
interface ModelEntry {
  name: string;
  context_window?: number | null;
  pricing?: ModelPricing | null;
}

/** Statuses a thread's totals count: finished runs (DeerFlow's), and the running one with `include_active=true`. */
const COUNTED = new Set(["success", "error"]);
const COUNTED_ACTIVE = new Set(["success", "error", "running"]);

/**
 * DeerFlow's context usage: the thread's current messages counted with the
 * approximate counter the summarization uses (about 4 characters a token, 3
 * a message), against the `context_window` of the latest run's model (else
 * the first configured model); `percentage` with one decimal, null without a
 * window.
 */
export function contextUsage(messages: readonly Message[], maxContextTokens: number | null | undefined): ThreadContextUsage {
  const tokenCount = messages.length ? approximateTokenCounter(messages) : 0;
  const max = maxContextTokens && maxContextTokens > 0 ? maxContextTokens : null;
  return { token_count: tokenCount, max_context_tokens: max, percentage: max ? Math.round((tokenCount / max) * 1000) / 10 : null };
}

/** Prompt-cache hits (`usage_metadata.input_token_details.cache_read`) of the replies in the thread's messages. */
function cacheReadTokens(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) {
    if (m.type !== "ai") continue;
    const v = m.usage_metadata?.input_token_details?.cache_read;
    if (typeof v === "number" && v > 0) n += v;
  }
  return n;
}

/** Sum of the priced runs' cost; null when no run's model is priced, or when prices mix currencies (a sum would be meaningless). */
function threadCost(runs: readonly RunRecord[], models: readonly ModelEntry[]): { cost: number | null; currency: string | null } {
  let cost = 0;
  let currency: string | null | undefined;
  let priced = false;
  for (const r of runs) {
    const c = costOf(models, r.modelName, { inputTokens: r.usage.totalInputTokens, outputTokens: r.usage.totalOutputTokens });
    if (!c) continue;
    if (priced && c.currency !== currency) return { cost: null, currency: null };
    priced = true;
    currency = c.currency;
    cost += c.cost;
  }
  return priced ? { cost: Math.round(cost * 1e8) / 1e8, currency: currency ?? null } : { cost: null, currency: null };
}

/**
 * `GET /threads/{id}/token-usage`: DeerFlow's `ThreadTokenUsageResponse` (totals of the thread's finished
 * runs, by model name and by caller, and `context_usage`), plus `cache_read_tokens` and, when the runs'
 * models carry `pricing`, `cost` and `currency`.
 */
export function registerTokenUsageRoutes(app: Hono, ctx: GatewayContext): void {
  app.get("/threads/:thread_id/token-usage", async (c) => {
    checkThreadId(c.req.param("thread_id"));
    const threadId = readableThreadId(c);
    const statuses = c.req.query("include_active") === "true" ? COUNTED_ACTIVE : COUNTED;
    const all = await ctx.stores.runs.listByThread(threadId);
    const runs = all.filter((r) => statuses.has(r.status));
    const byModel: Record<string, { tokens: number; runs: number }> = {};
    const totals = { total_tokens: 0, total_input_tokens: 0, total_output_tokens: 0 };
    const byCaller = { lead_agent: 0, subagent: 0, middleware: 0 };
    for (const r of runs) {
      totals.total_tokens += r.usage.totalTokens;
      totals.total_input_tokens += r.usage.totalInputTokens;
      totals.total_output_tokens += r.usage.totalOutputTokens;
      byCaller.lead_agent += r.usage.leadAgentTokens;
      byCaller.subagent += r.usage.subagentTokens;
      byCaller.middleware += r.usage.middlewareTokens;
      const key = r.modelName ?? "unknown";
      byModel[key] ??= { tokens: 0, runs: 0 };
      byModel[key].tokens += r.usage.totalTokens;
      byModel[key].runs += 1;
    }
    const models = (((ctx.runtime.config() ?? ctx.options.appConfig) as { models?: ModelEntry[] } | undefined)?.models ?? []) as ModelEntry[];
    let usage: ThreadContextUsage | null = null;
    let cacheRead = 0;
    try {
      const messages = ((await ctx.runtime.readState(threadId))?.values.messages ?? []) as Message[];
      const latest = [...all].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).find((r) => r.modelName)?.modelName;
      const model = models.find((m) => m.name === latest) ?? models[0];
      usage = contextUsage(messages, model?.context_window);
      cacheRead = cacheReadTokens(messages);
    } catch (err) {
      // an unreadable checkpoint costs the badge, never the totals
      ctx.options.log(`[gateway] token-usage: could not read the state of thread ${threadId}: ${(err as Error).message}`);
    }
    return c.json({
      thread_id: threadId,
      ...totals,
      total_runs: runs.length,
      by_model: byModel,
      by_caller: byCaller,
      context_usage: usage,
      cache_read_tokens: cacheRead,
      ...threadCost(runs, models),
    });
  });
}
