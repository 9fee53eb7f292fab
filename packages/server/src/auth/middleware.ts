import { timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { HttpError } from "../http-error";
import { normalizeOrigin } from "../security";
import { TOKEN_PREFIX } from "./access-tokens";
import type { RequestUser } from "./request-user";
import { setRequestUser } from "./request-user";
import { apiRelativePath, requiredScope, scopesAllow } from "./scopes";
import type { AuthRuntime } from "./service";
import type { AuthSettings } from "./settings";
import { ACCESS_TOKEN_COOKIE, CSRF_COOKIE, CSRF_HEADER, readCookie, verifySession } from "./session";

/** Auth routes anyone may call (relative to the API mount). */
const PUBLIC_EXACT: ReadonlySet<string> = new Set([
  "/v1/auth/login/local",
  "/v1/auth/register",
  "/v1/auth/logout",
  "/v1/auth/setup-status",
  "/v1/auth/initialize",
  "/v1/auth/providers",
]);
const PUBLIC_PREFIXES: readonly string[] = ["/v1/auth/oauth/", "/v1/auth/callback/"];

/** The session-creating POSTs: no CSRF token exists yet, so they get an Origin check instead. */
const BOOTSTRAP: ReadonlySet<string> = new Set(["/v1/auth/login/local", "/v1/auth/register", "/v1/auth/initialize", "/v1/auth/logout"]);

const STATE_CHANGING: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Whether `method path` is reachable without a user: DeerFlow's public auth
 * routes (login, register, logout, setup-status, initialize, providers, the
 * OIDC `oauth/*` and `callback/*`). `path` is the full request path
 * (`/api/...` or `/api/langgraph/...`). Every other API route needs a user.
 */
export function isPublicAuthRoute(method: string, path: string): boolean {
  void method; // the same for every method: a public path has no private handler under another verb
  const rel = apiRelativePath(path);
  if (PUBLIC_EXACT.has(rel)) return true;
  return PUBLIC_PREFIXES.some((p) => rel.startsWith(p) && rel.length > p.length);
}

/** DeerFlow's 401 answer. */
export function unauthenticated(code: "not_authenticated" | "token_expired" | "token_invalid" | "user_not_found", message: string): HttpError {
  return new HttpError(401, { code, message });
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * CSRF for cookie-authenticated requests (double submit, DeerFlow's rule):
 * every POST/PUT/PATCH/DELETE echoes the `csrf_token` cookie in
 * `X-CSRF-Token`. A foreign page can make the browser send the cookies but
 * cannot read `csrf_token` (another origin), so it cannot send the header.
 * The session-creating POSTs have no token yet: they need a same-origin (or
 * `server.allowed_origins`) `Origin` when one is sent.
 */
function checkCsrf(c: Context, rel: string, allowedOrigins: () => ReadonlySet<string>): void {
  if (BOOTSTRAP.has(rel)) {
    const origin = c.req.header("origin");
    if (origin === undefined) return; // not a browser (curl, the CLI); a browser always sends Origin on POST
    // set by the browser (a page cannot forge it): a same-origin proxy in front of the gateway, such as
    // DeerFlow's Next.js frontend, forwards its own Origin, which is not the gateway's
    if (c.req.header("sec-fetch-site")?.toLowerCase() === "same-origin") return;
    const o = normalizeOrigin(origin);
    if (o === undefined || (o !== new URL(c.req.url).origin && !allowedOrigins().has(o))) throw new HttpError(403, "Cross-site auth request denied.");
    return;
  }
  const cookie = readCookie(c, CSRF_COOKIE);
  const header = c.req.header(CSRF_HEADER);
  if (!cookie || !header) throw new HttpError(403, "CSRF token missing. Include X-CSRF-Token header.");
  if (!sameSecret(cookie, header)) throw new HttpError(403, "CSRF token mismatch.");
}

/**
 * The caller of a session cookie, or why there is none: a valid HS256 JWT
 * (signature checked once per token and process), an existing account and a
 * token version equal to the account's, so logout and a password change
 * revoke every session at once, in every process. `settings` defaults to
 * `auth.settings()` (the middleware passes the ones it already resolved).
 */
export async function sessionUser(auth: AuthRuntime, token: string, settings: AuthSettings = auth.settings()): Promise<RequestUser | HttpError> {
  const claims = await verifySession(settings.jwtSecret!, token, auth.now());
  if (claims === "token_expired") return unauthenticated("token_expired", "Token error: expired");
  if (claims === "token_invalid") return unauthenticated("token_invalid", "Token error: invalid");
  const user = await auth.users().getById(claims.sub);
  if (!user) return unauthenticated("user_not_found", "User not found");
  if (user.tokenVersion !== claims.ver) return unauthenticated("token_invalid", "Token revoked (signed out or password changed)");
  return { id: user.id, email: user.email, systemRole: user.systemRole, needsSetup: user.needsSetup, oauthProvider: user.oauthProvider, source: "session" };
}

/**
 * The personal access token of `Authorization: Bearer dfp_…`, if any. Any
 * other `Authorization` (Basic auth of a reverse proxy, a proxy's own bearer
 * token) is not ours: the session cookie decides, as if it were absent.
 */
function bearerOf(c: Context): string | undefined {
  const h = c.req.header("authorization");
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1]?.startsWith(TOKEN_PREFIX) ? m[1] : undefined;
}

/** Answers of the auth routes carry credentials (a token's secret, the user): never cached by a proxy or browser. */
function noStore(c: Context, rel: string): void {
  if (!rel.startsWith("/v1/auth/")) return;
  try {
    if (!c.res.headers.has("cache-control")) c.res.headers.set("Cache-Control", "no-store");
  } catch {
    // a response with immutable headers (built elsewhere): the OIDC redirects set their own
  }
}

/**
 * The API's auth middleware, before every route: identifies the caller of
 * each request and records it for {@link userOf}.
 *
 * - Auth disabled: every request is the synthetic default admin; no CSRF.
 * - `Authorization: Bearer dfp_…`: a personal access token (no cookies, so
 *   no CSRF); the route must be within the token's scopes (403 naming the
 *   scope needed). An unknown or revoked one is 401, never a fallback to
 *   the request's cookies.
 * - Otherwise the session cookie: CSRF first (before anything is read or
 *   changed), then public auth routes pass (with the caller when the
 *   session is valid), and every other route needs a valid session (401
 *   with DeerFlow's `detail.code`).
 */
export function authMiddleware(auth: AuthRuntime, allowedOrigins: () => ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const settings = auth.settings();
    if (!settings.enabled) {
      setRequestUser(c, auth.disabledUser);
      return next();
    }
    const path = c.req.path;
    const method = c.req.method.toUpperCase();
    const rel = apiRelativePath(path);
    const bearer = bearerOf(c);
    if (bearer !== undefined) {
      const owner = await auth.users().tokens.resolve(bearer, auth.now());
      if (!owner) {
        if (isPublicAuthRoute(method, path)) return next();
        throw new HttpError(401, { code: "token_invalid", message: "Invalid or revoked access token (Authorization: Bearer dfp_…)" }, { "WWW-Authenticate": 'Bearer error="invalid_token"' });
      }
      const needed = requiredScope(method, path);
      if (!scopesAllow(owner.token.scopes, needed)) {
        throw new HttpError(
          403,
          `This access token lacks the '${needed}' scope needed for ${method} ${rel} (it has: ${owner.token.scopes.join(", ") || "none"}). Create a token with the '${needed}' scope.`,
          // RFC 6750: clients (the remote embedded client) read the missing scope from here
          { "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${needed}"` },
        );
      }
      setRequestUser(c, { ...owner.user, source: "token", scopes: owner.token.scopes });
      await next();
      return noStore(c, rel);
    }
    if (STATE_CHANGING.has(method)) checkCsrf(c, rel, allowedOrigins);
    const token = readCookie(c, ACCESS_TOKEN_COOKIE);
    if (isPublicAuthRoute(method, path)) {
      if (token) {
        const user = await sessionUser(auth, token, settings);
        if (!(user instanceof HttpError)) setRequestUser(c, user);
      }
      await next();
      return noStore(c, rel);
    }
    if (!token) throw unauthenticated("not_authenticated", "Authentication required");
    const user = await sessionUser(auth, token, settings);
    if (user instanceof HttpError) throw user;
    setRequestUser(c, user);
    await next();
    noStore(c, rel);
  };
}
