import { hkdfSync } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { loadJose } from "../jose";

/** Prefix of the per-provider state cookie (DeerFlow's name). */
export const OIDC_STATE_COOKIE_PREFIX = "df_oidc_state_";
/** How long a sign-in may take at the provider, in seconds. */
export const OIDC_STATE_MAX_AGE = 300;

/** What the browser carries between `oauth/{provider}` and `callback/{provider}`. */
export interface OidcStatePayload {
  provider: string;
  state: string;
  /** `null` when the provider entry has `nonce_enabled: false`. */
  nonce: string | null;
  /** The PKCE verifier; `null` when `pkce_enabled: false`. */
  codeVerifier: string | null;
  /** The redirect URI sent to the provider (the token request must repeat it exactly). */
  redirectUri: string;
  next: string;
  rememberMe: boolean;
}

const payloadSchema = z.object({
  provider: z.string(),
  state: z.string().min(1),
  nonce: z.string().nullable(),
  codeVerifier: z.string().nullable(),
  redirectUri: z.string(),
  next: z.string(),
  rememberMe: z.boolean(),
});

/**
 * The state cookie's key: derived from the session secret with HKDF under its
 * own label, so a state cookie can never pass for a session token (and the
 * session key is not used for a second purpose).
 */
function stateKey(jwtSecret: string): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", jwtSecret, "deerflow", "oidc-state-cookie/v1", 32));
}

/** The cookie's name for one provider. */
export function stateCookieName(provider: string): string {
  return `${OIDC_STATE_COOKIE_PREFIX}${provider}`;
}

/**
 * Encrypt the sign-in state (JWE `dir` + `A256GCM`: authenticated, and the
 * nonce and PKCE verifier stay unreadable in the browser) into a short-lived
 * HttpOnly cookie scoped to the callback path. `SameSite=Lax` because the
 * provider's redirect back is a cross-site top-level navigation, which Lax
 * cookies accompany and Strict ones do not.
 */
export async function setStateCookie(c: Context, jwtSecret: string, payload: OidcStatePayload, opts: { path: string; secure: boolean; now: number }): Promise<void> {
  const iat = Math.floor(opts.now / 1000);
  const { EncryptJWT } = await loadJose();
  const token = await new EncryptJWT({ ...payload })
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", typ: "df-oidc-state" })
    .setIssuedAt(iat)
    .setExpirationTime(iat + OIDC_STATE_MAX_AGE)
    .encrypt(stateKey(jwtSecret));
  setCookie(c, stateCookieName(payload.provider), token, {
    httpOnly: true,
    secure: opts.secure,
    sameSite: "Lax",
    path: opts.path,
    maxAge: OIDC_STATE_MAX_AGE,
  });
}

/**
 * The state of this provider's pending sign-in, or `null` when the cookie is
 * missing, was not made by this server, expired ({@link OIDC_STATE_MAX_AGE},
 * checked against `now`, not only the browser's Max-Age) or names another
 * provider.
 */
export async function readStateCookie(c: Context, jwtSecret: string, provider: string, now: number): Promise<OidcStatePayload | null> {
  const token = getCookie(c, stateCookieName(provider));
  if (!token) return null;
  const { jwtDecrypt } = await loadJose();
  try {
    const { payload } = await jwtDecrypt(token, stateKey(jwtSecret), {
      currentDate: new Date(now),
      clockTolerance: 0,
      typ: "df-oidc-state",
      keyManagementAlgorithms: ["dir"],
      contentEncryptionAlgorithms: ["A256GCM"],
    });
    const parsed = payloadSchema.safeParse(payload);
    if (!parsed.success || parsed.data.provider !== provider) return null;
    return parsed.data;
  } catch {
    return null;
  }
}

/** Drop the state cookie: a callback consumes it whatever the outcome, so one state is usable once. */
export function clearStateCookie(c: Context, provider: string, opts: { path: string; secure: boolean }): void {
  deleteCookie(c, stateCookieName(provider), { path: opts.path, secure: opts.secure, httpOnly: true, sameSite: "Lax" });
}
