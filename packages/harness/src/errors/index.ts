export {
  DeerFlowError,
  ConfigError,
  ModelCallError,
  ModelConfigError,
  ToolError,
  SandboxError,
  PathAccessError,
  CheckpointError,
  InvalidUpdateError,
  GraphRecursionError,
  RunCancelledError,
  RunServiceError,
  ValidationError,
  StreamBridgeError,
  hasErrorCode,
  errorMessage,
} from "./errors";
export type { DeerFlowErrorOptions, ModelErrorKind } from "./errors";
