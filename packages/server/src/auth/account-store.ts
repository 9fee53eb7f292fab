import type { AccessTokenInfo, TokenOwner } from "./access-tokens";
import type { SystemRole, TokenScope } from "./request-user";
import type { NewUser, UserRecord } from "./user-store";

/**
 * A value now (SQLite answers synchronously) or later (PostgreSQL). Callers
 * always `await` it, so one caller serves both backends; an awaited plain
 * value costs a microtask, not a round trip.
 */
export type Awaitable<T> = T | Promise<T>;

/** Personal access tokens, on whichever database holds the accounts. */
export interface AccessTokenStore {
  /** Mint a token; the returned `secret` exists only in this answer. @throws AuthError `auth.user_not_found`. */
  create(userId: string, name: string, scopes: readonly TokenScope[], now?: Date): Awaitable<AccessTokenInfo & { secret: string }>;
  /** The user's tokens, newest first. */
  list(userId: string): Awaitable<AccessTokenInfo[]>;
  /** One of the user's tokens. */
  get(userId: string, id: string): Awaitable<AccessTokenInfo | undefined>;
  /** Revoke one of the user's tokens; false when the user has no such token. */
  revoke(userId: string, id: string): Awaitable<boolean>;
  /** The token and owner a presented secret belongs to, or `undefined`. */
  resolve(secret: string, now?: number): Awaitable<TokenOwner | undefined>;
}

/** Failed-login counters per (account, client address), shared by every process on the database. */
export interface LoginThrottleStore {
  /** Milliseconds until the pair may try again, or 0 when it is not locked. */
  lockedFor(account: string, address: string, now: number): Awaitable<number>;
  /**
   * Start a password check: 0 when it may go ahead (counted now as a failure
   * until `clear`), else the milliseconds it stays locked. Atomic across processes.
   */
  begin(account: string, address: string, now: number): Awaitable<number>;
  /** Count a failure; returns the milliseconds of lockout it started (0 while under the limit). */
  recordFailure(account: string, address: string, now: number): Awaitable<number>;
  /** A successful login clears the pair's counter. */
  clear(account: string, address: string): Awaitable<void>;
}

/**
 * Accounts, their tokens and login throttling: `auth.db` (SQLite,
 * {@link UserStore}) or PostgreSQL ({@link PgUserStore}) behind one API.
 * Every check-then-write (one admin at initialize, never removing the last
 * admin, throttle counting) is atomic across processes on both.
 */
export interface AccountStore {
  readonly tokens: AccessTokenStore;
  readonly throttle: LoginThrottleStore;
  /** Create an account. @throws AuthError `auth.email_exists`, `auth.weak_password`, `auth.invalid_email`. */
  create(input: NewUser): Promise<UserRecord>;
  /** Create the first admin, atomically with the check that none exists. @throws AuthError `auth.already_initialized`. */
  initializeAdmin(input: { email: string; password: string }): Promise<UserRecord>;
  getById(id: string): Awaitable<UserRecord | undefined>;
  getByEmail(email: string): Awaitable<UserRecord | undefined>;
  getByOauth(provider: string, subject: string): Awaitable<UserRecord | undefined>;
  linkOauth(id: string, provider: string, subject: string): Awaitable<UserRecord>;
  list(): Awaitable<UserRecord[]>;
  countAdmins(): Awaitable<number>;
  /** @throws AuthError `auth.last_admin`, `auth.user_not_found`. */
  setRole(id: string, role: SystemRole): Awaitable<UserRecord>;
  /** @throws AuthError `auth.last_admin`, `auth.user_not_found`. */
  delete(id: string): Awaitable<void>;
  /** New local password; bumps the token version (every session signed out). Returns the new version. */
  setPassword(id: string, newPassword: string): Promise<number>;
  /** Revoke every session of the account. Returns the new version. */
  bumpTokenVersion(id: string): Awaitable<number>;
  /** @throws AuthError `auth.email_exists`. */
  setEmail(id: string, email: string, opts?: { completeSetup?: boolean }): Awaitable<UserRecord>;
  verifyCredentials(email: string, password: string): Promise<UserRecord | null>;
  checkPassword(id: string, password: string): Promise<boolean>;
  close(): Awaitable<void>;
}
