import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import type { CryptoKey, JWK } from "jose";
import type { OidcFault, OidcProvider, OidcProviderOptions, OidcTestClient, OidcTestUser, RecordedOidcRequest } from "./oidc-provider-types";

export type { OidcFault, OidcProvider, OidcProviderOptions, OidcTestClient, OidcTestUser, RecordedOidcRequest } from "./oidc-provider-types";

/** The client registered when {@link OidcProviderOptions.clients} is not given. */
export const DEFAULT_OIDC_TEST_CLIENT: OidcTestClient = { clientId: "deerflow-test", clientSecret: "test-secret" };

/** An issued, not yet redeemed authorization code. */
interface PendingCode {
  clientId: string;
  redirectUri: string;
  user: OidcTestUser;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  scope: string;
  expiresAt: number;
}

const MAX_BODY_BYTES = 64 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error("body too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  // OpenID Connect Core §3.1.3.3 / RFC 6749 §5.1: token and userinfo answers must not be cached.
  res.writeHead(status, { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", pragma: "no-cache", ...extra });
  res.end(JSON.stringify(body));
}

function sameSecret(a: string, b: string): boolean {
  const x = createHash("sha256").update(a).digest();
  const y = createHash("sha256").update(b).digest();
  return timingSafeEqual(x, y);
}

function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/**
 * Start a local OpenID Connect provider double on `127.0.0.1` (a free port),
 * speaking the wire format of OpenID Connect Core 1.0 and Discovery 1.0 for
 * the authorization code flow:
 *
 * - `GET /.well-known/openid-configuration` (below {@link OidcProviderOptions.issuerPath}): the provider metadata.
 * - `GET /jwks`: the public signing key (`RS256` or `ES256`, generated with jose at start, with a `kid`).
 * - `GET /authorize`: no login form. It validates `response_type=code`, the client, the exact `redirect_uri`,
 *   the `openid` scope and PKCE (`S256` only), picks the user named by `login_hint` (or
 *   {@link OidcProviderOptions.defaultUser}) and redirects (302) to `redirect_uri?code&state`; protocol errors
 *   go back as `?error&error_description&state` (Core §3.1.2.6), and an unknown client or redirect URI answers
 *   400 without redirecting. A browser test can therefore click through it.
 * - `POST /token`: `grant_type=authorization_code` with `client_secret_basic` or `client_secret_post`; codes are
 *   one-time and expire; `redirect_uri` must equal the one of the authorization request and the PKCE
 *   `code_verifier` must hash to its `code_challenge`. Answers `{access_token, token_type, expires_in, scope,
 *   id_token}` where the ID token is a signed JWT `{iss, sub, aud, exp, iat, auth_time, nonce, email,
 *   email_verified, name}`; errors use RFC 6749 §5.2 (`invalid_client` 401, `invalid_grant`, …).
 * - `GET|POST /userinfo` with `Authorization: Bearer <access_token>`: `{sub, email, email_verified, name}`.
 *
 * {@link OidcFault}s make it misbehave on purpose. Test code only: it keeps
 * every secret it sees in {@link OidcProvider.requests}.
 */
export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcProvider> {
  const alg = options.alg ?? "RS256";
  const now = options.now ?? Date.now;
  const clients = options.clients ?? [DEFAULT_OIDC_TEST_CLIENT];
  const users = new Map(Object.entries(options.users ?? {}));
  const idTokenTtl = options.idTokenTtlSeconds ?? 300;
  const codeTtl = options.codeTtlSeconds ?? 60;
  let faults = new Set<OidcFault>(options.faults ?? []);
  const requests: RecordedOidcRequest[] = [];
  const codes = new Map<string, PendingCode>();
  const accessTokens = new Map<string, { user: OidcTestUser; expiresAt: number }>();

  const kid = `k-${randomBytes(6).toString("hex")}`;
  const signing = await generateKeyPair(alg, { extractable: true });
  // The `bad_signature` fault signs with this key under the published key's kid.
  const impostor = await generateKeyPair(alg);
  const publicJwk: JWK = { ...(await exportJWK(signing.publicKey)), kid, alg, use: "sig" };

  let issuer = "";
  let origin = "";
  const issuerPath = (options.issuerPath ?? "").replace(/\/+$/, "");

  const record = (entry: RecordedOidcRequest) => requests.push(entry);
  const findClient = (id: string | null | undefined) => clients.find((c) => c.clientId === id);
  const redirectAllowed = (client: OidcTestClient, uri: string) => {
    if (client.redirectUris && client.redirectUris.length > 0) return client.redirectUris.includes(uri);
    return /^https?:\/\//.test(uri);
  };
  let defaultUser = options.defaultUser;
  const pickUser = (hint: string | null): OidcTestUser | undefined => {
    if (hint) return users.get(hint) ?? [...users.values()].find((u) => u.email.toLowerCase() === hint.toLowerCase());
    if (defaultUser) return users.get(defaultUser);
    return users.size === 1 ? [...users.values()][0] : undefined;
  };

  const metadata = () => ({
    issuer,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    userinfo_endpoint: `${origin}/userinfo`,
    jwks_uri: `${origin}/jwks`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [alg],
    scopes_supported: ["openid", "email", "profile"],
    token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
    code_challenge_methods_supported: ["S256"],
    claims_supported: ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "email", "email_verified", "name"],
  });

  async function idToken(code: PendingCode): Promise<string> {
    const iat = Math.floor(now() / 1000);
    const exp = faults.has("expired_token") ? iat - 3600 : iat + idTokenTtl;
    const claims: Record<string, unknown> = {
      email: code.user.email,
      email_verified: faults.has("unverified_email") ? false : code.user.emailVerified !== false,
      auth_time: faults.has("expired_token") ? iat - 3700 : iat,
      ...(code.user.name ? { name: code.user.name } : {}),
    };
    const nonce = faults.has("wrong_nonce") ? `not-${code.nonce ?? "a-nonce"}` : code.nonce;
    if (nonce !== undefined) claims.nonce = nonce;
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg, kid, typ: "JWT" })
      .setIssuer(faults.has("wrong_issuer") ? `${issuer}/other` : issuer)
      .setSubject(code.user.sub)
      .setAudience(faults.has("wrong_audience") ? `${code.clientId}-other` : code.clientId)
      .setIssuedAt(faults.has("expired_token") ? iat - 3700 : iat)
      .setExpirationTime(exp);
    return jwt.sign((faults.has("bad_signature") ? impostor.privateKey : signing.privateKey) as CryptoKey);
  }

  function authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const params = Object.fromEntries(q.entries());
    const client = findClient(q.get("client_id"));
    const redirectUri = q.get("redirect_uri") ?? "";
    // Core §3.1.2.6: never redirect to an unverified client or redirect URI.
    if (!client || !redirectAllowed(client, redirectUri)) {
      record({ endpoint: "authorize", method: "GET", params, status: 400 });
      return sendJson(res, 400, { error: "invalid_request", error_description: client ? "redirect_uri is not registered" : "unknown client_id" });
    }
    const back = new URL(redirectUri);
    const state = q.get("state");
    const fail = (error: string, description: string) => {
      back.searchParams.set("error", error);
      back.searchParams.set("error_description", description);
      if (state !== null) back.searchParams.set("state", state);
      record({ endpoint: "authorize", method: "GET", params, status: 302 });
      res.writeHead(302, { location: back.toString() });
      res.end();
    };
    if (q.get("response_type") !== "code") return fail("unsupported_response_type", "only response_type=code is supported");
    if (!(q.get("scope") ?? "").split(" ").includes("openid")) return fail("invalid_scope", "the openid scope is required");
    const challenge = q.get("code_challenge") ?? undefined;
    if (challenge !== undefined && q.get("code_challenge_method") !== "S256") return fail("invalid_request", "only code_challenge_method=S256 is supported");
    if (challenge === undefined && options.requirePkce) return fail("invalid_request", "code_challenge (S256) is required");
    if (faults.has("access_denied")) return fail("access_denied", "the user refused");
    const user = pickUser(q.get("login_hint"));
    if (!user) return fail("login_required", "no test user selected (login_hint or defaultUser)");
    const code = randomBytes(24).toString("base64url");
    codes.set(code, {
      clientId: client.clientId,
      redirectUri,
      user,
      nonce: q.get("nonce") ?? undefined,
      codeChallenge: challenge,
      scope: q.get("scope") ?? "openid",
      expiresAt: now() + codeTtl * 1000,
    });
    back.searchParams.set("code", code);
    if (state !== null) back.searchParams.set("state", state);
    record({ endpoint: "authorize", method: "GET", params, status: 302 });
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  async function token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const params = Object.fromEntries(form.entries());
    let clientId = form.get("client_id");
    let secret = form.get("client_secret");
    let clientAuth: RecordedOidcRequest["clientAuth"] = secret !== null ? "client_secret_post" : "none";
    const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    if (basic) {
      // RFC 6749 §2.3.1: id and secret are form-urlencoded before the Basic encoding.
      const decoded = Buffer.from(basic[1], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      clientId = decodeURIComponent(decoded.slice(0, colon < 0 ? undefined : colon).replace(/\+/g, " "));
      secret = colon < 0 ? "" : decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "));
      clientAuth = "client_secret_basic";
    }
    const fail = (status: number, error: string, description: string) => {
      record({ endpoint: "token", method: "POST", params, clientAuth, status });
      sendJson(res, status, { error, error_description: description }, status === 401 ? { "www-authenticate": 'Basic realm="oidc-double"' } : {});
    };
    const client = findClient(clientId);
    if (!client || secret === null || !sameSecret(secret, client.clientSecret)) return fail(401, "invalid_client", "client authentication failed");
    if (form.get("grant_type") !== "authorization_code") return fail(400, "unsupported_grant_type", "only authorization_code is supported");
    const codeValue = form.get("code") ?? "";
    const pending = codes.get(codeValue);
    // One-time: a code is consumed by its first redemption, successful or not.
    codes.delete(codeValue);
    if (!pending || pending.clientId !== client.clientId || pending.expiresAt <= now()) return fail(400, "invalid_grant", "the code is invalid, expired or was already used");
    if (form.get("redirect_uri") !== pending.redirectUri) return fail(400, "invalid_grant", "redirect_uri differs from the authorization request");
    if (pending.codeChallenge !== undefined) {
      const verifier = form.get("code_verifier");
      if (!verifier || s256(verifier) !== pending.codeChallenge) return fail(400, "invalid_grant", "PKCE verification failed");
    } else if (form.get("code_verifier") !== null) return fail(400, "invalid_grant", "code_verifier without a code_challenge");
    const accessToken = `at_${randomBytes(18).toString("base64url")}`;
    accessTokens.set(accessToken, { user: pending.user, expiresAt: now() + 3600_000 });
    record({ endpoint: "token", method: "POST", params, clientAuth, status: 200 });
    sendJson(res, 200, { access_token: accessToken, token_type: "Bearer", expires_in: 3600, scope: pending.scope, id_token: await idToken(pending) });
  }

  function userinfo(req: IncomingMessage, res: ServerResponse): void {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    const entry = bearer ? accessTokens.get(bearer[1]) : undefined;
    if (!entry || entry.expiresAt <= now()) {
      record({ endpoint: "userinfo", method: req.method ?? "GET", params: {}, status: 401 });
      return sendJson(res, 401, { error: "invalid_token" }, { "www-authenticate": 'Bearer error="invalid_token"' });
    }
    const u = entry.user;
    record({ endpoint: "userinfo", method: req.method ?? "GET", params: {}, status: 200 });
    sendJson(res, 200, {
      sub: u.sub,
      email: u.email,
      email_verified: faults.has("unverified_email") ? false : u.emailVerified !== false,
      ...(u.name ? { name: u.name } : {}),
    });
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", origin || "http://127.0.0.1");
      const path = url.pathname;
      if (path === `${issuerPath}/.well-known/openid-configuration` && req.method === "GET") {
        const status = faults.has("discovery_error") ? 503 : 200;
        record({ endpoint: "discovery", method: "GET", params: {}, status });
        return status === 200 ? sendJson(res, 200, metadata()) : sendJson(res, 503, { error: "temporarily_unavailable" });
      }
      if (path === "/jwks" && req.method === "GET") {
        record({ endpoint: "jwks", method: "GET", params: {}, status: 200 });
        res.writeHead(200, { "content-type": "application/jwk-set+json" });
        return res.end(JSON.stringify({ keys: [publicJwk] }));
      }
      if (path === "/authorize" && req.method === "GET") return authorize(url, res);
      if (path === "/token" && req.method === "POST") return token(req, res);
      if (path === "/userinfo" && (req.method === "GET" || req.method === "POST")) return userinfo(req, res);
      sendJson(res, 404, { error: "not_found" });
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: "server_error", error_description: String(err) });
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  issuer = `${origin}${issuerPath}`;

  return {
    issuer,
    url: origin,
    authorizationEndpoint: `${origin}/authorize`,
    tokenEndpoint: `${origin}/token`,
    userinfoEndpoint: `${origin}/userinfo`,
    jwksUri: `${origin}/jwks`,
    requests,
    setFaults(next) {
      faults = new Set(next);
    },
    selectUser(login) {
      if (!users.has(login)) throw new Error(`OIDC double: no user '${login}' (known: ${[...users.keys()].join(", ")})`);
      defaultUser = login;
    },
    addUser(login, user) {
      users.set(login, user);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
