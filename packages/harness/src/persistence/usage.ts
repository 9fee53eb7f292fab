import type { Message } from "../messages";
import type { RunUsage } from "./types";

/** Zero usage. */
export function emptyUsage(): RunUsage {
  return {
    totalInputTokens: 0,
    totalOutputTokens: 0,
    totalTokens: 0,
    llmCallCount: 0,
    leadAgentTokens: 0,
    subagentTokens: 0,
    middlewareTokens: 0,
    messageCount: 0,
  };
}

/**
 * Usage of one run from its final messages: the messages whose id is not in
 * `before` are the run's own; AI messages count as LLM calls and their
 * `usage_metadata` is summed. A `token_usage` object in the run context
 * (set by the token-usage middleware) wins for the token totals.
 */
export function runUsageFromMessages(messages: readonly Message[], before: ReadonlySet<string>, context: Record<string, unknown> = {}): RunUsage {
  const usage = emptyUsage();
  const fresh = messages.filter((m) => !m.id || !before.has(m.id));
  usage.messageCount = fresh.length;
  for (const m of fresh) {
    if (m.type !== "ai") continue;
    usage.llmCallCount++;
    const u = m.usage_metadata;
    if (!u) continue;
    usage.totalInputTokens += u.input_tokens ?? 0;
    usage.totalOutputTokens += u.output_tokens ?? 0;
    usage.totalTokens += u.total_tokens ?? 0;
  }
  const fromContext = context.token_usage as Partial<Record<string, number>> | undefined;
  if (fromContext && typeof fromContext === "object") {
    usage.totalInputTokens = fromContext.input_tokens ?? usage.totalInputTokens;
    usage.totalOutputTokens = fromContext.output_tokens ?? usage.totalOutputTokens;
    usage.totalTokens = fromContext.total_tokens ?? usage.totalTokens;
  }
  usage.leadAgentTokens = usage.totalTokens;
  return usage;
}
