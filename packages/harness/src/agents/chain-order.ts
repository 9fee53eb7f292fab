import type { AgentMiddleware } from "../runtime";

/**
 * The one definition of where each of DeerFlow's middlewares sits in an
 * agent's chain (first = outermost `wrap*` layer, `before*` first, `after*`
 * last). The lead agent's chain (`buildLeadMiddlewares`), a sub-agent's
 * chain and the config-free SDK factory (`createDeerflowAgent`) each choose
 * WHICH middlewares they run; their ORDER always comes from this list, so the
 * three cannot drift apart. Programmatic middlewares (not in the list) keep
 * the place they were given.
 */
export const MIDDLEWARE_ORDER: readonly string[] = Object.freeze([
  "InputSanitizationMiddleware",
  "ToolOutputBudgetMiddleware",
  "ToolResultSanitizationMiddleware",
  "ThreadDataMiddleware",
  "UploadsMiddleware",
  "SandboxMiddleware",
  "DanglingToolCallMiddleware",
  "LLMErrorHandlingMiddleware",
  "GuardrailMiddleware",
  "SandboxAuditMiddleware",
  "ReadBeforeWriteMiddleware",
  "ToolProgressMiddleware",
  "ToolErrorHandlingMiddleware",
  "DynamicContextMiddleware",
  "SkillActivationMiddleware",
  "SkillToolPolicyMiddleware",
  "DurableContextMiddleware",
  "DeerFlowSummarizationMiddleware",
  "TodoMiddleware",
  "TokenUsageMiddleware",
  "TitleMiddleware",
  "MemoryMiddleware",
  "ViewImageMiddleware",
  "McpRoutingMiddleware",
  "DeferredToolFilterMiddleware",
  "SystemMessageCoalescingMiddleware",
  "SubagentLimitMiddleware",
  "LoopDetectionMiddleware",
  "TokenBudgetMiddleware",
  // programmatic `custom_middlewares` and configured extensions sit here
  "TerminalResponseMiddleware",
  "ModelLengthFinishReasonMiddleware",
  "SafetyFinishReasonMiddleware",
  "ClarificationMiddleware",
]);

const RANK = new Map(MIDDLEWARE_ORDER.map((name, i) => [name, i]));
/** Where middlewares that are not DeerFlow's own go: after TokenBudget (row 30). */
const CUSTOM_RANK = (RANK.get("TokenBudgetMiddleware") ?? 0) + 0.5;

/**
 * Put a chain in canonical order: DeerFlow's middlewares by
 * {@link MIDDLEWARE_ORDER}, others at the custom-middleware slot, ties kept in
 * the order given (a stable sort).
 */
export function orderChain<M extends Pick<AgentMiddleware, "name">>(chain: readonly M[]): M[] {
  return chain
    .map((mw, i) => ({ mw, i, rank: RANK.get(mw.name) ?? CUSTOM_RANK }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map((x) => x.mw);
}
