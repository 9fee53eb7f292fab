import type * as oauth from "oauth4webapi";
import type { OidcSettings } from "../settings";
import { isLoopbackHostname } from "../../security";
import { OidcError } from "./errors";
import { loadOauth } from "./oauth-lib";
import type { OauthLib } from "./oauth-lib";

/** One `auth.oidc.providers.{id}` entry as parsed from config.yaml (`client_secret: $VAR` already resolved). */
export type OidcProviderConfig = OidcSettings["providers"][string];

/** How long discovered metadata (and the JWKS oauth4webapi caches on it) is reused. */
export const METADATA_TTL_MS = 300_000;
/** Per-request timeout towards the provider: a hung provider fails one sign-in, never a gateway worker. */
export const PROVIDER_TIMEOUT_MS = 10_000;

/** Discovered provider metadata plus the transport settings every later request to it uses. */
export interface ResolvedProvider {
  readonly as: oauth.AuthorizationServer;
  /** True when plain `http:` is allowed, which only loopback providers get. */
  readonly insecure: boolean;
}

/** The identity a provider vouched for in a validated ID token (plus userinfo). */
export interface OidcIdentity {
  readonly subject: string;
  /** Empty when the provider gave none. */
  readonly email: string;
  readonly emailVerified: boolean;
  readonly name: string | null;
}

/**
 * Whether `url` may be fetched: `https:` always, `http:` only on a loopback
 * host (a provider on this machine, like the test double or a local
 * Keycloak). Anything else would carry codes, client secrets and ID tokens in
 * clear text.
 */
function transportAllowed(url: string): { ok: boolean; insecure: boolean } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, insecure: false };
  }
  if (u.protocol === "https:") return { ok: true, insecure: false };
  if (u.protocol === "http:" && isLoopbackHostname(u.hostname)) return { ok: true, insecure: true };
  return { ok: false, insecure: false };
}

function checkedEndpoints(id: string, as: oauth.AuthorizationServer): boolean {
  let insecure = false;
  for (const [key, value] of Object.entries({
    issuer: as.issuer,
    authorization_endpoint: as.authorization_endpoint,
    token_endpoint: as.token_endpoint,
    userinfo_endpoint: as.userinfo_endpoint,
    jwks_uri: as.jwks_uri,
  })) {
    if (value === undefined) {
      if (key === "userinfo_endpoint") continue;
      throw new OidcError("oidc.discovery_failed", `OIDC provider '${id}': the discovery document has no ${key} (set auth.oidc.providers.${id}.${key} to override it).`);
    }
    const t = transportAllowed(value);
    if (!t.ok) throw new OidcError("oidc.discovery_failed", `OIDC provider '${id}': ${key} ${value} must use https (plain http is allowed only on a loopback host).`);
    insecure ||= t.insecure;
  }
  return insecure;
}

function httpOptions(oauth: OauthLib, insecure: boolean) {
  return { signal: () => AbortSignal.timeout(PROVIDER_TIMEOUT_MS), [oauth.allowInsecureRequests]: insecure } as const;
}

/**
 * Provider discovery (OpenID Connect Discovery 1.0) with a short cache. The
 * discovered `issuer` must equal the configured one, so a tampered document
 * cannot change which `iss` ID tokens are checked against; the config's
 * `*_endpoint` / `jwks_uri` overrides replace the discovered values. A failed
 * discovery is not cached: the next sign-in tries again.
 */
export class OidcDiscovery {
  private readonly cache = new Map<string, { at: number; value: Promise<ResolvedProvider> }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The provider's metadata. @throws OidcError `oidc.discovery_failed`. */
  resolve(id: string, cfg: OidcProviderConfig): Promise<ResolvedProvider> {
    const key = JSON.stringify([id, cfg.issuer, cfg.authorization_endpoint, cfg.token_endpoint, cfg.userinfo_endpoint, cfg.jwks_uri]);
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < METADATA_TTL_MS) return hit.value;
    const value = this.discover(id, cfg);
    this.cache.set(key, { at: this.now(), value });
    value.catch(() => {
      if (this.cache.get(key)?.value === value) this.cache.delete(key);
    });
    return value;
  }

  private async discover(id: string, cfg: OidcProviderConfig): Promise<ResolvedProvider> {
    const t = transportAllowed(cfg.issuer);
    if (!t.ok) throw new OidcError("oidc.discovery_failed", `OIDC provider '${id}': issuer ${cfg.issuer} must use https (plain http is allowed only on a loopback host).`);
    const issuer = new URL(cfg.issuer);
    let discovered: oauth.AuthorizationServer;
    const oauth = await loadOauth();
    try {
      const response = await oauth.discoveryRequest(issuer, httpOptions(oauth, t.insecure));
      discovered = await oauth.processDiscoveryResponse(issuer, response);
    } catch (err) {
      throw new OidcError("oidc.discovery_failed", `OIDC discovery failed for provider '${id}' (${cfg.issuer}): ${describe(oauth, err)}`, { cause: err });
    }
    const as: oauth.AuthorizationServer = {
      ...discovered,
      authorization_endpoint: cfg.authorization_endpoint ?? discovered.authorization_endpoint,
      token_endpoint: cfg.token_endpoint ?? discovered.token_endpoint,
      userinfo_endpoint: cfg.userinfo_endpoint ?? discovered.userinfo_endpoint,
      jwks_uri: cfg.jwks_uri ?? discovered.jwks_uri,
    };
    return { as, insecure: checkedEndpoints(id, as) };
  }
}

/** A readable reason from an oauth4webapi or fetch error (codes and provider error fields, never secrets). */
export function describe(oauth: OauthLib, err: unknown): string {
  if (err instanceof oauth.ResponseBodyError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ""} (HTTP ${err.status})`;
  if (err instanceof oauth.OperationProcessingError) return `${err.message} [${err.code ?? "error"}]`;
  if (err instanceof Error) return err.name === "TimeoutError" ? `no answer within ${PROVIDER_TIMEOUT_MS / 1000} s` : err.message;
  return String(err);
}

/** What {@link authorizationUrl} needs. */
export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  nonce: string | null;
  codeChallenge: string | null;
}

/** The provider's authorization URL for a code-flow sign-in (OpenID Connect Core §3.1.2.1). */
export function authorizationUrl(provider: ResolvedProvider, cfg: OidcProviderConfig, req: AuthorizationRequest): string {
  const url = new URL(provider.as.authorization_endpoint!);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", cfg.client_id);
  url.searchParams.set("redirect_uri", req.redirectUri);
  url.searchParams.set("scope", (cfg.scopes.includes("openid") ? cfg.scopes : ["openid", ...cfg.scopes]).join(" "));
  url.searchParams.set("state", req.state);
  if (req.nonce) url.searchParams.set("nonce", req.nonce);
  if (req.codeChallenge) {
    url.searchParams.set("code_challenge", req.codeChallenge);
    url.searchParams.set("code_challenge_method", "S256");
  }
  return url.toString();
}

function clientAuth(oauth: OauthLib, id: string, cfg: OidcProviderConfig): oauth.ClientAuth {
  if (cfg.token_endpoint_auth_method === "none") return oauth.None();
  if (!cfg.client_secret) {
    throw new OidcError("oidc.misconfigured", `OIDC provider '${id}' uses ${cfg.token_endpoint_auth_method} but has no client_secret (set auth.oidc.providers.${id}.client_secret, e.g. to $${id.toUpperCase().replace(/-/g, "_")}_CLIENT_SECRET).`);
  }
  return cfg.token_endpoint_auth_method === "client_secret_basic" ? oauth.ClientSecretBasic(cfg.client_secret) : oauth.ClientSecretPost(cfg.client_secret);
}

/** What {@link redeemCode} needs from the sign-in's state. */
export interface CodeRedemption {
  /** The callback's query (`code`, `state`, `iss` …). */
  callback: URLSearchParams;
  expectedState: string;
  redirectUri: string;
  nonce: string | null;
  codeVerifier: string | null;
  /** Milliseconds; the ID token's `exp`/`iat` are checked against it. */
  now: number;
}

/**
 * Exchange the authorization code and validate the ID token: issuer,
 * audience (and `azp`), `exp`/`iat`, the nonce of this sign-in (or its
 * absence when nonces are off) by oauth4webapi, then the JWS signature
 * against the provider's JWKS — oauth4webapi leaves the signature to the
 * caller because the token came over TLS, but a loopback provider may be
 * plain http and a signature check costs one cached JWKS fetch. Userinfo, when
 * the provider has it, adds claims the ID token lacks; its `sub` must match.
 *
 * @throws OidcError `oidc.token_exchange_failed`, `oidc.id_token_invalid`, `oidc.misconfigured`.
 */
export async function redeemCode(id: string, provider: ResolvedProvider, cfg: OidcProviderConfig, r: CodeRedemption): Promise<OidcIdentity> {
  const skew = Math.round((r.now - Date.now()) / 1000);
  const oauth = await loadOauth();
  const client: oauth.Client = { client_id: cfg.client_id, [oauth.clockSkew]: skew };
  const opts = httpOptions(oauth, provider.insecure);
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(provider.as, client, r.callback, r.expectedState);
  } catch (err) {
    throw new OidcError("oidc.provider_error", `OIDC provider '${id}' answered the authorization request with an error: ${describe(oauth, err)}`, { cause: err });
  }
  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(provider.as, client, clientAuth(oauth, id, cfg), params, r.redirectUri, r.codeVerifier ?? oauth.nopkce, opts);
  } catch (err) {
    if (err instanceof OidcError) throw err;
    throw new OidcError("oidc.token_exchange_failed", `OIDC token request to provider '${id}' failed: ${describe(oauth, err)}`, { cause: err });
  }
  let tokens: oauth.TokenEndpointResponse;
  try {
    tokens = await oauth.processAuthorizationCodeResponse(provider.as, client, response, {
      expectedNonce: r.nonce ?? oauth.expectNoNonce,
      requireIdToken: true,
    });
  } catch (err) {
    // An error answer (invalid_grant for a replayed or foreign code …) is a failed exchange; a 200 answer that
    // does not pass the checks carries an unacceptable ID token.
    const refused = !response.ok || err instanceof oauth.ResponseBodyError || err instanceof oauth.WWWAuthenticateChallengeError;
    throw new OidcError(refused ? "oidc.token_exchange_failed" : "oidc.id_token_invalid", `OIDC provider '${id}': ${describe(oauth, err)}`, { cause: err });
  }
  try {
    await oauth.validateApplicationLevelSignature(provider.as, response, opts);
  } catch (err) {
    throw new OidcError("oidc.id_token_invalid", `OIDC provider '${id}': the ID token's signature does not verify against ${provider.as.jwks_uri}: ${describe(oauth, err)}`, { cause: err });
  }
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  let info: Record<string, unknown> = {};
  if (provider.as.userinfo_endpoint && tokens.access_token) {
    try {
      const res = await oauth.userInfoRequest(provider.as, client, tokens.access_token, opts);
      info = { ...(await oauth.processUserInfoResponse(provider.as, client, claims.sub, res)) };
    } catch (err) {
      // The ID token alone is a complete, validated answer; userinfo only adds claims.
      if (err instanceof oauth.OperationProcessingError && /"sub"/.test(err.message)) {
        throw new OidcError("oidc.id_token_invalid", `OIDC provider '${id}': userinfo names another subject than the ID token`, { cause: err });
      }
    }
  }
  const merged: Record<string, unknown> = { ...claims, ...info };
  return {
    subject: claims.sub,
    email: typeof merged.email === "string" ? merged.email.trim() : "",
    emailVerified: merged.email_verified === true,
    name: typeof merged.name === "string" ? merged.name : null,
  };
}
