import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { isLoopbackHostname } from "../security";
import type { TrustedProxies } from "./client-address";
import { isSecureRequest } from "./client-address";
import { loadJose } from "./jose";
import type { AuthSettings } from "./settings";

/** DeerFlow's cookie names. */
export const ACCESS_TOKEN_COOKIE = "access_token";
export const CSRF_COOKIE = "csrf_token";
export const SESSION_PERSISTENT_COOKIE = "deerflow_session_persistent";
/** The header a browser echoes the `csrf_token` cookie in. */
export const CSRF_HEADER = "x-csrf-token";

/** DeerFlow's switch that lets a plain-HTTP, non-loopback deployment keep a remember-me cookie. */
const ALLOW_INSECURE_PERSISTENT_ENV = "DEER_FLOW_AUTH_ALLOW_INSECURE_PERSISTENT_COOKIE";

/** The claims of a session JWT. */
export interface SessionClaims {
  sub: string;
  ver: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

/** Why a session cookie was refused (DeerFlow's `detail.code`). */
export type SessionProblem = "token_expired" | "token_invalid";

const keys = new Map<string, Uint8Array>();
function keyOf(secret: string): Uint8Array {
  let k = keys.get(secret);
  if (!k) {
    k = new TextEncoder().encode(secret);
    keys.clear(); // one secret at a time; a changed config drops the old key
    keys.set(secret, k);
  }
  return k;
}

/** Sign a session JWT `{sub, exp, iat, ver}` (HS256) for `days` from `nowMs`. */
export async function signSession(secret: string, userId: string, tokenVersion: number, days: number, nowMs = Date.now()): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const { SignJWT } = await loadJose();
  return new SignJWT({ ver: tokenVersion })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(userId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + days * 86_400)
    .sign(keyOf(secret));
}

/**
 * Verified JWTs by their text: a token is immutable, so its signature is
 * checked once per process; expiry is still checked on every use, and the
 * token version against the database on every request.
 */
class VerifiedCache {
  private readonly map = new Map<string, SessionClaims>();
  private secret = "";
  constructor(private readonly max = 2048) {}
  get(secret: string, token: string): SessionClaims | undefined {
    if (secret !== this.secret) {
      this.map.clear();
      this.secret = secret;
    }
    return this.map.get(token);
  }
  set(token: string, claims: SessionClaims): void {
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value!);
    this.map.set(token, claims);
  }
}
const verified = new VerifiedCache();

/** Verify a session JWT: its claims, or why it is refused. Only HS256 is accepted (no `alg: none`, no key confusion). */
export async function verifySession(secret: string, token: string, nowMs = Date.now()): Promise<SessionClaims | SessionProblem> {
  const cached = verified.get(secret, token);
  if (cached) return cached.exp * 1000 <= nowMs ? "token_expired" : cached;
  const { errors: joseErrors, jwtVerify } = await loadJose();
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), { algorithms: ["HS256"], currentDate: new Date(nowMs) });
    if (typeof payload.sub !== "string" || typeof payload.exp !== "number" || !Number.isInteger(payload.ver)) return "token_invalid";
    const claims: SessionClaims = { sub: payload.sub, ver: payload.ver as number, exp: payload.exp };
    verified.set(token, claims);
    return claims;
  } catch (err) {
    return err instanceof joseErrors.JWTExpired ? "token_expired" : "token_invalid";
  }
}

/** A fresh double-submit CSRF token. */
export function newCsrfToken(): string {
  return randomBytes(32).toString("base64url");
}

function isLoopbackHost(c: Context): boolean {
  const host = new URL(c.req.url).hostname;
  // browsers resolve every `*.localhost` name to this machine too
  return isLoopbackHostname(host) || host.endsWith(".localhost");
}

/** The attributes each session cookie is set and cleared with: only `csrf_token` is readable by the page. */
const COOKIE_ATTRS = {
  [ACCESS_TOKEN_COOKIE]: { httpOnly: true, sameSite: "Lax" },
  [SESSION_PERSISTENT_COOKIE]: { httpOnly: true, sameSite: "Lax" },
  [CSRF_COOKIE]: { httpOnly: false, sameSite: "Strict" },
} as const;

/** Whether the session cookies get `Secure`: HTTPS directly, or (with `proxies`) as a trusted proxy reports it. */
function secureRequest(c: Context, proxies: TrustedProxies | undefined): boolean {
  return proxies ? isSecureRequest(c, proxies) : new URL(c.req.url).protocol === "https:";
}

/** Options of {@link issueSession}. */
export interface IssueSessionOptions {
  /** Persistent cookies (Max-Age) instead of browser-session ones. Default: the `deerflow_session_persistent` cookie's choice, else true. */
  rememberMe?: boolean;
  /** Reverse proxies trusted for `X-Forwarded-Proto`. */
  proxies?: TrustedProxies;
  /** Clock (ms) for `iat`/`exp`. */
  nowMs?: number;
}

/**
 * Sign `user` in on this response, as DeerFlow does: `access_token` (HttpOnly,
 * SameSite=Lax, the JWT), `deerflow_session_persistent` (`1`/`0`) and
 * `csrf_token` (readable by the page, SameSite=Strict), `Secure` over HTTPS.
 * Remember-me sets `Max-Age` (session_days) on all three, except over plain
 * HTTP to a non-loopback host, where a long-lived cookie could be sniffed
 * (unless `DEER_FLOW_AUTH_ALLOW_INSECURE_PERSISTENT_COOKIE=1`).
 * Returns `expires_in` (seconds).
 */
export async function issueSession(
  c: Context,
  settings: AuthSettings,
  user: { id: string; tokenVersion: number },
  opts: IssueSessionOptions = {},
): Promise<number> {
  const expiresIn = settings.sessionDays * 86_400;
  const remember = opts.rememberMe ?? rememberedChoice(c) ?? true;
  const secure = secureRequest(c, opts.proxies);
  const persistentAllowed = secure || isLoopbackHost(c) || ["1", "true", "yes", "on"].includes((process.env[ALLOW_INSECURE_PERSISTENT_ENV] ?? "").toLowerCase());
  const maxAge = remember && persistentAllowed ? expiresIn : undefined;
  const token = settings.enabled && settings.jwtSecret ? await signSession(settings.jwtSecret, user.id, user.tokenVersion, settings.sessionDays, opts.nowMs) : "auth-disabled";
  const base = { path: "/", secure, ...(maxAge !== undefined ? { maxAge } : {}) };
  setCookie(c, ACCESS_TOKEN_COOKIE, token, { ...base, ...COOKIE_ATTRS[ACCESS_TOKEN_COOKIE] });
  setCookie(c, SESSION_PERSISTENT_COOKIE, remember ? "1" : "0", { ...base, ...COOKIE_ATTRS[SESSION_PERSISTENT_COOKIE] });
  setCookie(c, CSRF_COOKIE, newCsrfToken(), { ...base, ...COOKIE_ATTRS[CSRF_COOKIE] });
  return expiresIn;
}

function rememberedChoice(c: Context): boolean | undefined {
  const v = readCookie(c, SESSION_PERSISTENT_COOKIE);
  return v === "1" ? true : v === "0" ? false : undefined;
}

/** Clear the three session cookies (logout). */
export function clearSession(c: Context, proxies?: TrustedProxies): void {
  const secure = secureRequest(c, proxies);
  for (const name of [ACCESS_TOKEN_COOKIE, CSRF_COOKIE, SESSION_PERSISTENT_COOKIE] as const) deleteCookie(c, name, { path: "/", secure, ...COOKIE_ATTRS[name] });
}

/**
 * One cookie's value from the request, without parsing the whole header into
 * an object (this runs on every request). A name sent twice with different
 * values counts as absent: the gateway sets each of its cookies once, at
 * path `/`, so a second one was written by someone else. Cookies are not
 * kept apart by port, so a page on another port of this host can add its
 * own `access_token` with a longer path, which browsers send first; taking
 * it would quietly turn the signed-in user into the planter's account.
 */
export function readCookie(c: Context, name: string): string | undefined {
  const header = c.req.header("cookie");
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    try {
      v = decodeURIComponent(v);
    } catch {
      /* kept as sent */
    }
    if (found !== undefined && found !== v) return undefined;
    found = v;
  }
  return found;
}
