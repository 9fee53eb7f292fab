import { z } from "zod";
import type { GuardrailDecision, GuardrailProvider, GuardrailRequest } from "../guardrails";
import type { ToolMessage } from "../messages";
import { toolMessage } from "../messages";
import type { AgentMiddleware, ToolCallRequest } from "../runtime/types";
import { isControlFlowError } from "./tool-error-handling-control-flow";
import { parseMiddlewareOptions } from "./zod-options";

const optionsSchema = z.object({
  provider: z.custom<GuardrailProvider>(
    (v) => !!v && typeof v === "object" && typeof (v as { evaluate?: unknown }).evaluate === "function",
    "must be an object with an evaluate(request) method",
  ),
  fail_closed: z.boolean().default(true),
  passport: z.string().nullish(),
});

/** Options of {@link createGuardrailMiddleware} (the `guardrails:` section with a resolved provider). */
export type GuardrailOptions = z.input<typeof optionsSchema>;

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);

/** Build the provider request for a tool call from the run context. */
export function buildGuardrailRequest(request: ToolCallRequest, passport: string | null): GuardrailRequest {
  const context = request.runtime.context;
  const identity = context.identity;
  // Attribution keys a gateway adds (roles, OAuth ids) stay in DeerFlow's wire names.
  const ctx = context as Record<string, unknown>;
  const attrs = ctx.authz_attributes;
  return {
    tool_name: String(request.toolCall.name ?? ""),
    tool_input: (request.toolCall.args ?? {}) as Record<string, unknown>,
    agent_id: passport,
    thread_id: identity.threadId,
    run_id: identity.runId,
    tool_call_id: str(request.toolCall.id),
    user_id: identity.userId,
    user_role: str(ctx.user_role),
    oauth_provider: str(ctx.oauth_provider),
    oauth_id: str(ctx.oauth_id),
    channel_user_id: str(ctx.channel_user_id),
    is_internal: ctx.is_internal === true,
    is_subagent: !!ctx.is_subagent,
    authz_attributes: attrs && typeof attrs === "object" && !Array.isArray(attrs) ? { ...(attrs as Record<string, unknown>) } : {},
    timestamp: new Date().toISOString(),
  };
}

/** The error tool message of a denied call. */
export function guardrailDeniedMessage(request: ToolCallRequest, decision: GuardrailDecision): ToolMessage {
  const name = String(request.toolCall.name || "unknown_tool");
  const reason = decision.reasons?.[0];
  const text = reason?.message || "blocked by guardrail policy";
  const code = reason?.code || "oap.denied";
  return toolMessage(`Guardrail denied: tool '${name}' was blocked (${code}). Reason: ${text}. Choose an alternative approach.`, {
    tool_call_id: String(request.toolCall.id || "missing_id"),
    name,
    status: "error",
  });
}

/**
 * DeerFlow's GuardrailMiddleware: every tool call is evaluated by the
 * provider before execution. A deny becomes an error tool message the model
 * can adapt to. A provider exception blocks the call when `fail_closed`
 * (default) and lets it through otherwise.
 */
export function createGuardrailMiddleware(options: GuardrailOptions): AgentMiddleware {
  const opts = parseMiddlewareOptions("GuardrailMiddleware", optionsSchema, options);
  const provider = opts.provider;
  const passport = opts.passport ?? null;
  return {
    name: "GuardrailMiddleware",
    async wrapToolCall(request, handler) {
      const gr = buildGuardrailRequest(request, passport);
      let decision: GuardrailDecision;
      try {
        decision = await provider.evaluate(gr);
        if (!decision || typeof decision.allow !== "boolean") throw new TypeError("guardrail provider returned no decision");
      } catch (err) {
        if (isControlFlowError(err)) throw err;
        if (opts.fail_closed) {
          return guardrailDeniedMessage(request, {
            allow: false,
            reasons: [{ code: "oap.evaluator_error", message: "guardrail provider error (fail-closed)" }],
          });
        }
        return handler(request);
      }
      if (!decision.allow) return guardrailDeniedMessage(request, decision);
      return handler(request);
    },
  };
}
