/** The gateway's logs, access lines, request ids, run lines, metrics and redaction. */
export { createAccessLogMiddleware } from "./access-log";
export type { AccessLogOptions } from "./access-log";
export { messageSink, openLogger, textDestination } from "./logger";
export type { LogDestination, Logger, LoggerSettings } from "./logger";
export { costOf } from "./pricing";
export type { Cost, ModelPricing, PricedModel, PricedTokens } from "./pricing";
export { isSecretKey, REDACTED, redactText, redactValue } from "./redact";
export { acceptRequestId, REQUEST_ID_HEADER, requestIdOf } from "./request-id";
export { createRunLogHook } from "./run-log";
export type { RunLogOptions } from "./run-log";
export { observabilitySettings } from "./settings";
export type { LogFormat, LogLevel, ObservabilityConfig, ObservabilitySettings } from "./settings";
export { attachObservability } from "./attach";
export type { ObservabilityAttachOptions } from "./attach";
export { openMetrics } from "./metrics";
export type { GatewayMetrics } from "./metrics";
