export {
  BLOCKED_TAGS,
  escapeFrameworkTags,
  neutralizeUntrustedText,
  frameUntrustedText,
  neutralizeBoundaryMarkers,
  USER_INPUT_BEGIN,
  USER_INPUT_END,
  WEB_CONTENT_BEGIN,
  WEB_CONTENT_END,
  frameWebContent,
  neutralizeWebContent,
} from "../text";
export { createInputSanitizationMiddleware, ORIGINAL_USER_CONTENT_KEY } from "./input-sanitization";
export type { InputSanitizationOptions } from "./input-sanitization";
export { createToolOutputBudgetMiddleware, toolOutputOptionsSchema } from "./tool-output-budget";
export type { ToolOutputBudgetOptions } from "./tool-output-budget";
export { createToolResultSanitizationMiddleware, REMOTE_CONTENT_TOOL_NAMES } from "./tool-result-sanitization";
export type { ToolResultSanitizationOptions } from "./tool-result-sanitization";
export { createDanglingToolCallMiddleware, patchDanglingToolCalls } from "./dangling-tool-call";
export type { DanglingToolCallOptions } from "./dangling-tool-call";
export { createLLMErrorHandlingMiddleware, llmCallSectionSchema, circuitBreakerSectionSchema } from "./llm-error-handling";
export type { LLMErrorHandlingOptions } from "./llm-error-handling";
export { classifyModelError } from "./llm-error-classify";
export type { LLMErrorReason } from "./llm-error-classify";
export { createGuardrailMiddleware } from "./guardrail";
export type { GuardrailOptions } from "./guardrail";
export { createToolErrorHandlingMiddleware } from "./tool-error-handling";
export type { ToolErrorHandlingOptions } from "./tool-error-handling";
export { TOOL_META_KEY } from "./tool-error-handling-meta";
export type { ToolResultMeta } from "./tool-error-handling-meta";
export { createThreadDataMiddleware } from "./thread-data";
export { createUploadsMiddleware, formatCurrentUploads } from "./uploads";
export { createSandboxMiddleware } from "./sandbox";
export { auditCommand, createSandboxAuditMiddleware } from "./sandbox-audit";
export { createReadBeforeWriteMiddleware, READ_MARK_KEY, contentHash } from "./read-before-write";
export {
  createDynamicContextMiddleware,
  isDynamicContextReminder,
  lastInjectedDate,
  stripInjectedUserMessageIdSuffix,
  formatReminderDate,
  DYNAMIC_CONTEXT_REMINDER_KEY,
  INJECTED_USER_MESSAGE_ID_SUFFIX,
  MEMORY_REPORT_KEY,
} from "./dynamic-context";
export type { DynamicContextOptions, MemoryInjection, MemoryProvider, MemoryRequest } from "./dynamic-context";
export { createMemoryMiddleware } from "./memory";
export type { MemoryMiddlewareOptions, MemorySink } from "./memory";
export { createSummarizationMiddleware, isRealUserMessage, DEFAULT_SUMMARY_PROMPT } from "./summarization";
export type { SummarizationOptions, SummarizationEvent } from "./summarization";
export { projectSummary, DURABLE_CONTEXT_AUTHORITY_CONTRACT } from "./summarization-projection";
export { approximateTokenCounter } from "./summarization-cutoff";
export type { TokenCounter } from "./summarization-cutoff";
export { createTodoMiddleware, MAX_TODO_COMPLETION_REMINDERS } from "./todo";
export type { TodoOptions } from "./todo";
export { createTokenUsageMiddleware } from "./token-usage";
export type { TokenUsageOptions } from "./token-usage";
export { createTitleMiddleware } from "./title";
export type { TitleOptions } from "./title";
export { createViewImageMiddleware, isViewImageContextMessage } from "./view-image";
export type { ViewImageOptions } from "./view-image";
export { createSystemMessageCoalescingMiddleware } from "./system-message-coalescing";
export { createLoopDetectionMiddleware, LOOP_WARNING_MESSAGE, LOOP_HARD_STOP_MESSAGE } from "./loop-detection";
export type { LoopDetectionOptions } from "./loop-detection";
export { hashToolCalls } from "./loop-detection-hash";
export { createTokenBudgetMiddleware } from "./token-budget";
export type { TokenBudgetOptions } from "./token-budget";
export { createTerminalResponseMiddleware, TERMINAL_FALLBACK_CONTENT } from "./terminal-response";
export { createModelLengthFinishReasonMiddleware, MODEL_LENGTH_CAPPED_STOP_REASON } from "./model-length-finish-reason";
export type { ModelLengthFinishReasonOptions, ModelLengthTerminationDetector } from "./model-length-finish-reason";
export { createSafetyFinishReasonMiddleware } from "./safety-finish-reason";
export type { SafetyFinishReasonOptions } from "./safety-finish-reason";
export type { SafetyTerminationDetector } from "./safety-finish-reason-detectors";
export { createClarificationMiddleware } from "./clarification";
export type { HumanInputRequest } from "./clarification-payload";
export { createSkillActivationMiddleware, SKILL_ACTIVATION_KEY, slashActivationContext } from "./skill-activation";
export type { SkillActivationOptions } from "./skill-activation";
export { createSkillToolPolicyMiddleware } from "./skill-tool-policy";
export type { SkillToolPolicyOptions } from "./skill-tool-policy";
export { createSubagentLimitMiddleware, SUBAGENT_LIMIT_REACHED_MESSAGE, SUBAGENT_LIMIT_CAPPED_STOP_REASON } from "./subagent-limit";
export type { SubagentLimitOptions } from "./subagent-limit";
export { createDurableContextMiddleware } from "./durable-context";
export type { DurableContextOptions } from "./durable-context";
export { createDeferredToolFilterMiddleware, deferredToolFilterOptionsSchema, deferredToolRefusal } from "./deferred-tool-filter";
export type { DeferredToolFilterOptions } from "./deferred-tool-filter";
export { createMcpRoutingMiddleware, mcpRoutingOptionsSchema } from "./mcp-routing";
export type { McpRoutingOptions } from "./mcp-routing";
