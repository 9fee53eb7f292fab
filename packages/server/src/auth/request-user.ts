import type { Context } from "hono";
import { HttpError } from "../http-error";

/** DeerFlow's two system roles. */
export type SystemRole = "admin" | "user";

/** What a personal access token may do (`read` ⊂ `run`; `admin` adds the admin-only routes). */
export type TokenScope = "read" | "run" | "admin";

/** How the caller of this request was identified. */
export type AuthSource = "session" | "token" | "disabled";

/**
 * The signed-in user of one request. Every route reads the caller through
 * {@link userOf}; nothing reads a user id from the gateway options.
 */
export interface RequestUser {
  readonly id: string;
  readonly email: string;
  readonly systemRole: SystemRole;
  /** True until the account finished first-run setup (DeerFlow's `needs_setup` of `me`). */
  readonly needsSetup: boolean;
  /** `null` for local accounts, else the OIDC provider id the account signed in with. */
  readonly oauthProvider: string | null;
  readonly source: AuthSource;
  /** The token's scopes when `source` is `token`; absent for sessions and auth-disabled mode (everything allowed). */
  readonly scopes?: readonly TokenScope[];
}

/** The Hono context variable holding the caller (set by the auth middleware). */
const USER_VAR = "deerflowUser";

/** Record the caller of this request (the auth middleware's job). */
export function setRequestUser(c: Context, user: RequestUser): void {
  c.set(USER_VAR as never, user as never);
}

/** The caller of this request, if the auth middleware identified one. */
export function maybeUserOf(c: Context): RequestUser | undefined {
  return c.get(USER_VAR as never) as RequestUser | undefined;
}

/**
 * The caller of this request. A route reached without one is a wiring bug
 * (a route outside the auth middleware): it answers 401 rather than serving
 * the request as somebody.
 */
export function userOf(c: Context): RequestUser {
  const user = maybeUserOf(c);
  if (!user) throw new HttpError(401, { code: "not_authenticated", message: "Authentication required" });
  return user;
}

/** 403 unless the caller is an admin (and, for a token, holds the `admin` scope). */
export function requireAdmin(c: Context, message = "Admin privileges required"): RequestUser {
  const user = userOf(c);
  const scoped = user.source !== "token" || (user.scopes ?? []).includes("admin");
  if (user.systemRole !== "admin" || !scoped) throw new HttpError(403, message);
  return user;
}
