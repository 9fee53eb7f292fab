import type { Message } from "../messages";
import { AGENT_CALLER, callerTokens } from "../runtime/outcome";
import type { RunOutcome } from "../runtime/outcome";
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
 * Usage of one run as its record stores it: token totals and the split by
 * caller from the run's typed outcome (the provider's own figures, counted by
 * the runtime per model call), message count from the messages the run added.
 */
export function runUsageFromOutcome(outcome: RunOutcome, messages: readonly Message[], before: ReadonlySet<string>): RunUsage {
  return {
    totalInputTokens: outcome.usage.input_tokens,
    totalOutputTokens: outcome.usage.output_tokens,
    totalTokens: outcome.usage.total_tokens,
    llmCallCount: outcome.usage.llm_call_count,
    leadAgentTokens: outcome.usageByCaller[AGENT_CALLER]?.total_tokens ?? 0,
    subagentTokens: callerTokens(outcome, "subagent"),
    middlewareTokens: callerTokens(outcome, "middleware"),
    messageCount: messages.reduce((n, m) => (!m.id || !before.has(m.id) ? n + 1 : n), 0),
  };
}

/**
 * Usage of a run that ended without a result (it crashed before reporting):
 * the best estimate from the messages it added, whose `usage_metadata` is summed.
 */
export function runUsageFromMessages(messages: readonly Message[], before: ReadonlySet<string>): RunUsage {
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
  usage.leadAgentTokens = usage.totalTokens;
  return usage;
}
