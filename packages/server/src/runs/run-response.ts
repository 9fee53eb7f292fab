import { wireTimestamp } from "@deerflow/harness";
import type { RunRecord } from "@deerflow/harness";

/** The wire `RunResponse` of the contract (§2.3). */
export function runResponse(r: RunRecord): Record<string, unknown> {
  return {
    run_id: r.runId,
    thread_id: r.threadId,
    assistant_id: r.assistantId,
    status: r.status,
    metadata: r.metadata,
    kwargs: r.kwargs,
    multitask_strategy: r.multitaskStrategy,
    created_at: wireTimestamp(r.createdAt),
    updated_at: wireTimestamp(r.updatedAt),
    total_input_tokens: r.usage.totalInputTokens,
    total_output_tokens: r.usage.totalOutputTokens,
    total_tokens: r.usage.totalTokens,
    llm_call_count: r.usage.llmCallCount,
    lead_agent_tokens: r.usage.leadAgentTokens,
    subagent_tokens: r.usage.subagentTokens,
    middleware_tokens: r.usage.middlewareTokens,
    message_count: r.usage.messageCount,
    stop_reason: r.stopReason,
    error: r.error,
  };
}

const SECRET_KEY = /(api[_-]?key|token|secret|password|authorization|cookie|credential)/i;

/** Deep-copy a value with secret-looking keys replaced by `***`. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) && k !== "token_usage" ? "***" : redactSecrets(v, depth + 1);
  }
  return out;
}
