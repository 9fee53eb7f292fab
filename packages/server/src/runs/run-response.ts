import { redactSecretKeys, wireTimestamp } from "@deerflow-ts/harness";
import type { RunRecord } from "@deerflow-ts/harness";

/** The fields of a `RunResponse` (what `select` may name). */
export const RUN_FIELDS = [
  "run_id", "thread_id", "assistant_id", "status", "metadata", "kwargs", "multitask_strategy", "created_at", "updated_at",
  "total_input_tokens", "total_output_tokens", "total_tokens", "llm_call_count", "lead_agent_tokens", "subagent_tokens",
  "middleware_tokens", "message_count", "stop_reason", "error",
] as const;

/** The wire `RunResponse` of DeerFlow's LangGraph-compatible API (what `GET /threads/{id}/runs/{run_id}` answers). */
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

/** Deep-copy a value with secret-looking keys replaced by `***` (the harness's rule, shared with the embedded client). */
export const redactSecrets = redactSecretKeys;
