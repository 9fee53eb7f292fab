/**
 * Users and sign-in: settings, the account store (`auth.db`), password
 * hashing, session cookies, personal access tokens, login throttling and the
 * middleware that identifies the caller of every API request.
 */
export { authDisabledUser } from "./auth-disabled";
export { maybeUserOf, requireAdmin, setRequestUser, userOf } from "./request-user";
export type { AuthSource, RequestUser, SystemRole, TokenScope } from "./request-user";
export { resolveAuthSettings } from "./settings";
export type { AuthSection, AuthSettings, OidcSettings } from "./settings";
export { AuthError, isAuthError } from "./errors";
export type { AuthErrorCode } from "./errors";
export { assertStrongPassword, hashPassword, MIN_PASSWORD_LENGTH, passwordProblem, verifyPassword } from "./password";
export { authDbPath, emailKey, openUserStore, UserStore } from "./user-store";
export type { AccessTokenStore, AccountStore, Awaitable, LoginThrottleStore } from "./account-store";
export { PgUserStore } from "./pg-user-store";
export type { PgUserStoreOptions } from "./pg-user-store";
export { AUTH_COMPONENT, AUTH_MIGRATIONS } from "./pg-auth-schema";
export { openAccountStore } from "./open-account-store";
export type { AccountDatabase, OpenAccountStoreOptions } from "./open-account-store";
export type { NewUser, UserRecord } from "./user-store";
export { AccessTokens, TOKEN_PREFIX, TOKEN_SCOPES } from "./access-tokens";
export type { AccessTokenInfo, TokenOwner } from "./access-tokens";
export { LOCKOUT_MS, LoginThrottle, MAX_LOGIN_FAILURES } from "./login-throttle";
export { clientAddress, isSecureRequest, peerAddress, throttleAddress, throttleAddressKey, TrustedProxies } from "./client-address";
export {
  ACCESS_TOKEN_COOKIE,
  clearSession,
  CSRF_COOKIE,
  CSRF_HEADER,
  issueSession,
  newCsrfToken,
  readCookie,
  SESSION_PERSISTENT_COOKIE,
  signSession,
  verifySession,
} from "./session";
export type { IssueSessionOptions, SessionClaims, SessionProblem } from "./session";
export { apiRelativePath, requiredScope, scopesAllow } from "./scopes";
export { authMiddleware, isPublicAuthRoute, sessionUser, unauthenticated } from "./middleware";
export { AuthRuntime } from "./service";
export type { AuthRuntimeOptions } from "./service";
