/** Types of the local OpenID Connect provider double ({@link startOidcProvider}). */

/** A person who can "sign in" at the double (there is no login form: see {@link OidcProviderOptions.defaultUser}). */
export interface OidcTestUser {
  /** The stable subject identifier (`sub`). */
  sub: string;
  email: string;
  /** `email_verified` of the ID token and userinfo (default true). */
  emailVerified?: boolean;
  /** `name` claim (optional). */
  name?: string;
}

/** A confidential client registered at the double. */
export interface OidcTestClient {
  clientId: string;
  clientSecret: string;
  /** Redirect URIs accepted exactly (OpenID Connect Core §3.1.2.1). Empty or absent: any `http(s)` URI (convenient when the port is not known yet). */
  redirectUris?: string[];
}

/**
 * A deliberate misbehaviour of the double, so a relying party's refusal can be tested:
 *
 * | Fault | What the double does |
 * |---|---|
 * | `wrong_nonce` | the ID token's `nonce` is not the one of the authorization request |
 * | `wrong_audience` | the ID token's `aud` is another client id |
 * | `wrong_issuer` | the ID token's `iss` is another issuer |
 * | `expired_token` | the ID token expired an hour ago (`exp` = now − 3600 s) |
 * | `unverified_email` | `email_verified: false` in the ID token and userinfo, whatever the user says |
 * | `bad_signature` | the ID token is signed by another key carrying the published key's `kid` |
 * | `access_denied` | the authorization endpoint redirects back with `error=access_denied` |
 * | `discovery_error` | `/.well-known/openid-configuration` answers 503 |
 */
export type OidcFault =
  | "wrong_nonce"
  | "wrong_audience"
  | "wrong_issuer"
  | "expired_token"
  | "unverified_email"
  | "bad_signature"
  | "access_denied"
  | "discovery_error";

/** Options of {@link startOidcProvider}. */
export interface OidcProviderOptions {
  /** Registered clients (default one: `deerflow-test` / `test-secret`, any redirect URI). */
  clients?: OidcTestClient[];
  /** Users by login name. The authorization request picks one with `login_hint` (a login name or an email). */
  users?: Record<string, OidcTestUser>;
  /** Login name used when the authorization request has no `login_hint` (default: the only user, if there is exactly one). */
  defaultUser?: string;
  /** ID token signing algorithm (default `RS256`, the one every relying party supports). */
  alg?: "RS256" | "ES256";
  /** Path of the issuer below the server's origin, e.g. `/realms/test` (default none: the issuer is the origin). */
  issuerPath?: string;
  /** Faults active from the start (see {@link OidcProvider.setFaults}). */
  faults?: OidcFault[];
  /** Refuse authorization requests without an S256 `code_challenge` (default false; `plain` is always refused). */
  requirePkce?: boolean;
  /** ID token lifetime in seconds (default 300). */
  idTokenTtlSeconds?: number;
  /** Authorization code lifetime in seconds (default 60). */
  codeTtlSeconds?: number;
  /** Clock in milliseconds (default `Date.now`), for `iat`/`exp` and code expiry. */
  now?: () => number;
}

/** One request the double answered (secrets included: it is a test double). */
export interface RecordedOidcRequest {
  endpoint: "discovery" | "jwks" | "authorize" | "token" | "userinfo";
  method: string;
  /** Query parameters (authorize, discovery) or form parameters (token). */
  params: Record<string, string>;
  /** Token endpoint only: how the client authenticated. */
  clientAuth?: "client_secret_basic" | "client_secret_post" | "none";
  status: number;
}

/** A running provider double. */
export interface OidcProvider {
  /** The issuer identifier (`iss`), e.g. `http://127.0.0.1:41234` (no trailing slash). */
  readonly issuer: string;
  /** The server's origin. */
  readonly url: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly userinfoEndpoint: string;
  readonly jwksUri: string;
  /** Every request answered, oldest first. */
  readonly requests: RecordedOidcRequest[];
  /** Replace the active faults (an empty list makes the double behave again). */
  setFaults(faults: OidcFault[]): void;
  /** Make `login` the user chosen when an authorization request has no `login_hint`. */
  selectUser(login: string): void;
  /** Add or replace a user. */
  addUser(login: string, user: OidcTestUser): void;
  close(): Promise<void>;
}
