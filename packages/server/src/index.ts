/**
 * @deerflow-ts/server — the HTTP gateway: LangGraph-compatible threads/runs/SSE
 * API plus DeerFlow's REST endpoints, on Hono.
 */
export { createGateway, startServer } from "./gateway";
export type { Gateway } from "./gateway";
export type { AgentFactory, GatewayAppConfig, GatewayOptions } from "./options";
export { HttpError } from "./http-error";
// Users and sign-in (the CLI's `deerflow users` works on the same store).
export {
  AuthError,
  authDbPath,
  authDisabledUser,
  emailKey,
  hashPassword,
  isAuthError,
  isPublicAuthRoute,
  issueSession,
  maybeUserOf,
  openAccountStore,
  openUserStore,
  passwordProblem,
  PgUserStore,
  requireAdmin,
  requiredScope,
  resolveAuthSettings,
  setRequestUser,
  TOKEN_PREFIX,
  TOKEN_SCOPES,
  userOf,
  UserStore,
  verifyPassword,
} from "./auth";
export type { AccessTokenInfo, AccountDatabase, AccountStore, AuthErrorCode, AuthSection, AuthSettings, NewUser, RequestUser, SystemRole, TokenScope, UserRecord } from "./auth";
// Persistence, model and upload types live in the harness (shared with the
// embedded client); re-exported under their earlier server names.
export { openSqliteStores } from "@deerflow-ts/harness";
export type {
  PersistenceStores as GatewayStores,
  MessageRow,
  MessageStore,
  ModelInfo,
  MultitaskStrategy,
  RunRecord,
  RunRecordStatus as RunStatus,
  RunStore,
  RunUsage,
  ThreadRecord,
  ThreadStore,
  UploadLimits,
} from "@deerflow-ts/harness";
export { formatFrame, parseEventId } from "./sse/frame";
export { runCreateRequestSchema } from "./runs/run-request";
export type { RunCreateRequest } from "./runs/run-request";
// Which addresses a --host binds, and whether one is reachable beyond loopback (`deerflow serve` checks it).
export { bindHostExposure } from "./security/bind";
// Structured logs (`log_level`, `logging.enhance`): `deerflow serve` builds the logger and hands it to the gateway.
export { messageSink, observabilitySettings, openLogger, redactText, redactValue } from "./observability";
export type { Logger, LogFormat, LogLevel, ObservabilityConfig, ObservabilitySettings } from "./observability";
