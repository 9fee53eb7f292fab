import { timingSafeEqual } from "node:crypto";
import { appConfigSchema, formatKeyPath } from "@deerflow-ts/harness";
import type { Context, Hono } from "hono";
import { HttpError } from "../../http-error";
import type { AuthSettings, OidcSettings } from "../settings";
import type { UserRecord } from "../user-store";
import { OidcError } from "./errors";
import { resolveNextPath } from "./next-path";
import { loadOauth } from "./oauth-lib";
import { authorizationUrl, OidcDiscovery, redeemCode } from "./protocol";
import type { OidcProviderConfig } from "./protocol";
import { provisionOidcUser } from "./provisioning";
import type { OidcUserStore } from "./provisioning";
import { clearStateCookie, readStateCookie, setStateCookie } from "./state-cookie";

/** Provider ids usable in the `oauth/{provider}` and `callback/{provider}` paths (DeerFlow's rule). */
export const OIDC_PROVIDER_ID = /^[a-zA-Z0-9_-]+$/;

/** What {@link registerOidcRoutes} runs on. */
export interface OidcRouteDeps {
  /** The current auth settings (read per request, so an edited config.yaml applies to the next sign-in). */
  settings: () => AuthSettings;
  /** The account store (a getter: the gateway opens it lazily). */
  users: () => OidcUserStore;
  /** Sign `user` in on this response (the auth core's `issueSession` with the current settings). */
  issueSession: (c: Context, user: UserRecord, opts: { rememberMe: boolean }) => unknown;
  /**
   * Whether this request reached the gateway over HTTPS, counting a trusted
   * reverse proxy's `X-Forwarded-Proto` (the auth core's `isSecureRequest`).
   * Used for the redirect URI derived from the request. Default: the request URL's scheme.
   */
  isSecure?: (c: Context) => boolean;
  /** Clock in milliseconds (state cookie age, ID token expiry). Default `Date.now`. */
  now?: () => number;
  log?: (message: string) => void;
  /** Shared discovery cache (default: one per registration). */
  discovery?: OidcDiscovery;
}

/** One entry of `GET /api/v1/auth/providers` (only what the login page shows; no endpoints or secrets). */
export interface OidcProviderListing {
  id: string;
  display_name: string;
  type: "oidc";
}

/** The providers the login page offers: none unless auth and `auth.oidc` are both enabled. */
export function listOidcProviders(settings: AuthSettings): OidcProviderListing[] {
  if (!settings.enabled || !settings.oidc.enabled) return [];
  return Object.entries(settings.oidc.providers ?? {})
    .filter(([id]) => OIDC_PROVIDER_ID.test(id))
    .map(([id, cfg]) => ({ id, display_name: cfg.display_name, type: "oidc" as const }));
}

const withDefaultsCache = new WeakMap<object, OidcSettings>();

/**
 * `auth.oidc` with the config schema's defaults (scopes, PKCE, nonce,
 * provisioning policy). A config.yaml is parsed already; an `auth` option
 * given to the gateway by hand (tests, embedding) is not, and a missing
 * `require_verified_email` must still mean "on".
 */
function withDefaults(oidc: OidcSettings): OidcSettings {
  const hit = withDefaultsCache.get(oidc);
  if (hit) return hit;
  const parsed = appConfigSchema.shape.auth.safeParse({ oidc });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpError(503, `Single sign-on is misconfigured: auth.${formatKeyPath(issue.path as (string | number)[])}: ${issue.message}`);
  }
  const value = parsed.data.oidc as OidcSettings;
  withDefaultsCache.set(oidc, value);
  return value;
}

/** `/login?error=…` codes the frontend knows (DeerFlow's). */
type LoginErrorCode = "sso_failed" | "sso_cancelled" | "sso_not_allowed" | "sso_account_exists";

function loginErrorCode(err: OidcError): LoginErrorCode {
  if (err.code === "oidc.not_allowed") return "sso_not_allowed";
  if (err.code === "oidc.account_exists") return "sso_account_exists";
  return "sso_failed";
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function parseRememberMe(v: string | undefined): boolean {
  // DeerFlow's default is a persistent session; the login page always sends the checkbox's value.
  if (v === undefined) return true;
  return !["false", "0", "no", "off"].includes(v.trim().toLowerCase());
}

/**
 * `GET /v1/auth/oauth/{provider}` (start a sign-in) and
 * `GET /v1/auth/callback/{provider}` (the provider's redirect back), on the
 * `/api` app. Both are public (no session yet) and GET, so CSRF does not
 * apply: the state cookie binds a callback to the browser that started it.
 *
 * Answers: OIDC or auth disabled → 404; a provider id outside
 * `^[a-zA-Z0-9_-]+$` or not configured → 400; discovery failing → 502 (only
 * that sign-in fails; nothing else depends on a provider); a callback
 * without `code`/`state` → 400; a missing, expired or foreign state cookie
 * or a state mismatch → 403. Every later failure (the provider's error, the
 * code exchange, the ID token's checks, provisioning) redirects to the
 * frontend's `/login?error=sso_failed|sso_cancelled|sso_not_allowed|sso_account_exists`,
 * and success signs the user in and redirects to the validated `next` path.
 */
export function registerOidcRoutes(app: Hono, deps: OidcRouteDeps): void {
  const now = deps.now ?? Date.now;
  const log = deps.log ?? ((m: string) => console.error(m));
  const discovery = deps.discovery ?? new OidcDiscovery(now);

  /** The enabled settings and the provider entry of this request, or the 404/400 answer. */
  const lookup = (c: Context): { settings: AuthSettings & { jwtSecret: string }; id: string; cfg: OidcProviderConfig } => {
    const settings = deps.settings();
    if (!settings.enabled || !settings.oidc.enabled || !settings.jwtSecret) throw new HttpError(404, "SSO authentication is not enabled");
    const id = c.req.param("provider") ?? "";
    if (!OIDC_PROVIDER_ID.test(id)) throw new HttpError(400, "Invalid provider ID");
    if (!Object.hasOwn(settings.oidc.providers ?? {}, id)) throw new HttpError(400, `Unknown SSO provider: ${id}`);
    return { settings: settings as AuthSettings & { jwtSecret: string }, id, cfg: withDefaults(settings.oidc).providers[id] };
  };

  const frontendUrl = (settings: AuthSettings, path: string) => `${(settings.oidc.frontend_base_url ?? "").replace(/\/+$/, "")}${path}`;

  const redirectUriOf = (c: Context, settings: AuthSettings, id: string, cfg: OidcProviderConfig): string => {
    if (cfg.redirect_uri) return cfg.redirect_uri;
    const base = settings.oidc.frontend_base_url;
    if (base) return `${base.replace(/\/+$/, "")}/api/v1/auth/callback/${id}`;
    // This request's own origin (its Host passed the request guard's allow-list; https when a trusted proxy
    // terminated TLS) and mount (/api or /api/langgraph).
    const url = new URL(c.req.url);
    const scheme = deps.isSecure?.(c) ? "https:" : url.protocol;
    return `${scheme}//${url.host}${url.pathname.replace(/\/oauth\/[^/]+\/?$/, `/callback/${id}`)}`;
  };

  const cookieScope = (redirectUri: string) => {
    const u = new URL(redirectUri);
    return { path: u.pathname, secure: u.protocol === "https:" };
  };

  const resolveProvider = async (id: string, cfg: OidcProviderConfig) => {
    try {
      return await discovery.resolve(id, cfg);
    } catch (err) {
      log(`[auth] ${err instanceof Error ? err.message : String(err)}`);
      throw new HttpError(502, "Failed to connect to SSO provider");
    }
  };

  app.get("/v1/auth/oauth/:provider", async (c) => {
    const { settings, id, cfg } = lookup(c);
    const next = resolveNextPath(c.req.query("next"));
    const rememberMe = parseRememberMe(c.req.query("remember_me"));
    const redirectUri = redirectUriOf(c, settings, id, cfg);
    const provider = await resolveProvider(id, cfg);
    const oauth = await loadOauth();
    const state = oauth.generateRandomState();
    const nonce = cfg.nonce_enabled ? oauth.generateRandomNonce() : null;
    const codeVerifier = cfg.pkce_enabled ? oauth.generateRandomCodeVerifier() : null;
    const codeChallenge = codeVerifier ? await oauth.calculatePKCECodeChallenge(codeVerifier) : null;
    await setStateCookie(c, settings.jwtSecret, { provider: id, state, nonce, codeVerifier, redirectUri, next, rememberMe }, { ...cookieScope(redirectUri), now: now() });
    c.header("Cache-Control", "no-store");
    return c.redirect(authorizationUrl(provider, cfg, { redirectUri, state, nonce, codeChallenge }), 302);
  });

  app.get("/v1/auth/callback/:provider", async (c) => {
    const { settings, id, cfg } = lookup(c);
    c.header("Cache-Control", "no-store");
    const fail = (code: LoginErrorCode) => c.redirect(frontendUrl(settings, `/login?error=${code}`), 302);
    const query = new URL(c.req.url).searchParams;
    const providerError = query.get("error");
    if (providerError) {
      log(`[auth] OIDC provider '${id}' returned error ${JSON.stringify(providerError.slice(0, 100))}`);
      return fail(providerError === "access_denied" ? "sso_cancelled" : "sso_failed");
    }
    const code = query.get("code");
    const state = query.get("state");
    if (!code || !state) throw new HttpError(400, "Missing code or state parameter");
    const pending = await readStateCookie(c, settings.jwtSecret, id, now());
    if (!pending) throw new HttpError(403, "Missing or expired OIDC state cookie");
    if (!sameString(pending.state, state)) throw new HttpError(403, "OIDC state mismatch");
    // Consumed whatever happens next: a state (and its nonce and verifier) serves one callback.
    clearStateCookie(c, id, cookieScope(pending.redirectUri));
    const provider = await resolveProvider(id, cfg);
    let user: UserRecord;
    try {
      const identity = await redeemCode(id, provider, cfg, {
        callback: query,
        expectedState: pending.state,
        redirectUri: pending.redirectUri,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
        now: now(),
      });
      const provisioned = await provisionOidcUser(deps.users(), id, cfg, identity);
      if (provisioned.created) log(`[auth] created ${provisioned.user.systemRole} account ${provisioned.user.email} from OIDC provider '${id}'`);
      user = provisioned.user;
    } catch (err) {
      if (!(err instanceof OidcError)) throw err;
      log(`[auth] OIDC sign-in via '${id}' failed (${err.code}): ${err.message}`);
      return fail(loginErrorCode(err));
    }
    await deps.issueSession(c, user, { rememberMe: pending.rememberMe });
    return c.redirect(frontendUrl(settings, resolveNextPath(pending.next)), 302);
  });
}
