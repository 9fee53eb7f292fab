export {
  BLOCKED_TAGS,
  escapeFrameworkTags,
  neutralizeUntrustedText,
  frameUntrustedText,
  neutralizeBoundaryMarkers,
  USER_INPUT_BEGIN,
  USER_INPUT_END,
} from "./prompt-tags";
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
