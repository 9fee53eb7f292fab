import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Options of {@link startOAuthTokenServer}. */
export interface OAuthTokenServerOptions {
  /** Registered confidential clients: `client_id → client_secret`. */
  clients?: Record<string, string>;
  /** Refresh tokens accepted at start: `refresh_token → client_id` (client may be "" for public clients). */
  refreshTokens?: Record<string, string>;
  /** `expires_in` of issued access tokens, seconds (default 3600). */
  expiresIn?: number;
  /** Issue a new refresh token on each refresh grant and revoke the used one (default false). */
  rotateRefreshTokens?: boolean;
  /** `token_type` in responses (default "Bearer"). */
  tokenType?: string;
  /** Port on 127.0.0.1 (default any free port). */
  port?: number;
  /** Clock in ms (tests that move time). */
  now?: () => number;
}

/** One token request as received (secrets included: it is a test double). */
export interface RecordedTokenRequest {
  grant_type: string;
  client_id: string | null;
  /** How the client authenticated: `basic` (RFC 6749 §2.3.1 header), `body` or `none`. */
  client_auth: "basic" | "body" | "none";
  scope: string | null;
  audience: string | null;
  params: Record<string, string>;
  status: number;
}

/** A running token endpoint. */
export interface OAuthTokenServer {
  /** Base URL, e.g. `http://127.0.0.1:43210`. */
  url: string;
  /** The token endpoint: `${url}/oauth/token`. */
  tokenUrl: string;
  requests: RecordedTokenRequest[];
  /** True when `token` was issued here and has not expired. */
  isValid(token: string): boolean;
  /** The currently valid refresh tokens (after rotation). */
  readonly refreshTokens: string[];
  close(): Promise<void>;
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))));
    req.on("error", reject);
  });
}

function reply(res: ServerResponse, status: number, body: Record<string, unknown>, extra: Record<string, string> = {}): void {
  // RFC 6749 §5.1: token responses must not be cached.
  res.writeHead(status, { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", pragma: "no-cache", ...extra });
  res.end(JSON.stringify(body));
}

/**
 * A local OAuth 2.0 token endpoint (RFC 6749 §4.4 `client_credentials` and
 * RFC 6749 §6 `refresh_token` grants) for tests: form-encoded `POST /oauth/token`,
 * client authentication by HTTP Basic or body parameters, JSON token
 * responses with `access_token`, `token_type`, `expires_in` (and a rotated
 * `refresh_token` when asked), and the RFC's error codes (`invalid_request`,
 * `invalid_client` with 401, `invalid_grant`, `unsupported_grant_type`).
 */
export async function startOAuthTokenServer(options: OAuthTokenServerOptions = {}): Promise<OAuthTokenServer> {
  const clients = { ...(options.clients ?? {}) };
  const refresh = new Map(Object.entries(options.refreshTokens ?? {}));
  const issued = new Map<string, number>();
  const requests: RecordedTokenRequest[] = [];
  const now = options.now ?? Date.now;
  const expiresIn = options.expiresIn ?? 3600;
  const tokenType = options.tokenType ?? "Bearer";

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (url.pathname !== "/oauth/token") return reply(res, 404, { error: "not_found" });
      if (req.method !== "POST") return reply(res, 405, { error: "invalid_request", error_description: "use POST" }, { allow: "POST" });
      const form = await readForm(req);
      const params = Object.fromEntries(form.entries());
      let clientId = form.get("client_id");
      let secret = form.get("client_secret");
      let auth: RecordedTokenRequest["client_auth"] = clientId ? "body" : "none";
      const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? "");
      if (basic) {
        const [id, pw] = Buffer.from(basic[1], "base64").toString("utf8").split(":");
        clientId = decodeURIComponent(id ?? "");
        secret = decodeURIComponent(pw ?? "");
        auth = "basic";
      }
      const grant = form.get("grant_type") ?? "";
      const record = (status: number) =>
        requests.push({ grant_type: grant, client_id: clientId ?? null, client_auth: auth, scope: form.get("scope"), audience: form.get("audience"), params, status });
      const fail = (status: number, error: string, description: string) => {
        record(status);
        reply(res, status, { error, error_description: description }, status === 401 ? { "www-authenticate": 'Basic realm="token"' } : {});
      };
      if (!grant) return fail(400, "invalid_request", "grant_type is required");
      const clientOk = clientId != null && clientId in clients && clients[clientId] === secret;
      if (clientId != null && clientId in clients && !clientOk) return fail(401, "invalid_client", "client authentication failed");
      let newRefresh: string | undefined;
      if (grant === "client_credentials") {
        if (!clientOk) return fail(401, "invalid_client", "client authentication failed");
      } else if (grant === "refresh_token") {
        const rt = form.get("refresh_token");
        if (!rt) return fail(400, "invalid_request", "refresh_token is required");
        const owner = refresh.get(rt);
        if (owner === undefined || (owner && owner !== clientId)) return fail(400, "invalid_grant", "refresh token is invalid, expired or revoked");
        if (options.rotateRefreshTokens) {
          refresh.delete(rt);
          newRefresh = `rt_${randomBytes(12).toString("hex")}`;
          refresh.set(newRefresh, owner);
        }
      } else return fail(400, "unsupported_grant_type", `grant_type '${grant}' is not supported`);
      const token = `at_${randomBytes(16).toString("hex")}`;
      issued.set(token, now() + expiresIn * 1000);
      record(200);
      reply(res, 200, {
        access_token: token,
        token_type: tokenType,
        expires_in: expiresIn,
        ...(form.get("scope") ? { scope: form.get("scope") } : {}),
        ...(newRefresh ? { refresh_token: newRefresh } : {}),
      });
    })().catch(() => reply(res, 500, { error: "server_error" }));
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    tokenUrl: `${url}/oauth/token`,
    requests,
    isValid: (token) => (issued.get(token) ?? 0) > now(),
    get refreshTokens() {
      return [...refresh.keys()];
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
