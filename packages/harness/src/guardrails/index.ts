export type { GuardrailDecision, GuardrailProvider, GuardrailReason, GuardrailRequest } from "./types";
export { AllowlistProvider, REASON_ALLOWED, REASON_TOOL_NOT_ALLOWED } from "./allowlist-provider";
export type { AllowlistProviderOptions } from "./allowlist-provider";
