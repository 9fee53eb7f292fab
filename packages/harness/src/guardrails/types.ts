/** Context handed to a guardrail provider for one tool call. */
export interface GuardrailRequest {
  tool_name: string;
  tool_input: Record<string, unknown>;
  /** The agent's passport / id (`guardrails.passport`). */
  agent_id: string | null;
  thread_id: string | null;
  run_id: string | null;
  tool_call_id: string | null;
  user_id: string | null;
  user_role: string | null;
  oauth_provider: string | null;
  oauth_id: string | null;
  channel_user_id: string | null;
  /** True only when the run context says `is_internal === true`. */
  is_internal: boolean;
  is_subagent: boolean;
  authz_attributes: Record<string, unknown>;
  /** ISO-8601 time of the evaluation. */
  timestamp: string;
}

/** A structured allow/deny reason (OAP reason object). */
export interface GuardrailReason {
  code: string;
  message?: string;
}

/** A provider's verdict (OAP decision object). */
export interface GuardrailDecision {
  allow: boolean;
  reasons: GuardrailReason[];
  policy_id?: string | null;
  metadata?: Record<string, unknown>;
}

/**
 * Pluggable pre-execution authorization of tool calls. Any object with a
 * `name` and an `evaluate` (sync or async) works.
 */
export interface GuardrailProvider {
  readonly name: string;
  evaluate(request: GuardrailRequest): GuardrailDecision | Promise<GuardrailDecision>;
}
