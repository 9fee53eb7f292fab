import { errorMessage } from "../errors";
import type { McpOAuthConfig } from "../config";
import { McpError } from "./errors";

/** A `fetch`-compatible function (what the SDK's HTTP transports accept). */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

interface CachedToken {
  header: string;
  expiresAt: number;
}

/** How long a token request may take before it fails. */
const TOKEN_REQUEST_TIMEOUT_MS = 15_000;

/**
 * Obtains and caches the bearer token of one MCP server (RFC 6749
 * `client_credentials` or `refresh_token` grant) and refreshes it
 * `refresh_skew_seconds` before it expires. Concurrent callers share one
 * token request. A rotated `refresh_token` returned by the endpoint is kept
 * in memory for the next refresh (never written back to the config file).
 */
export class OAuthTokenManager {
  private token: CachedToken | null = null;
  private inflight: Promise<string> | null = null;
  private refreshToken: string | null;
  /** Number of token requests sent (for status and tests). */
  requests = 0;

  constructor(
    private readonly server: string,
    private readonly oauth: McpOAuthConfig,
    private readonly now: () => number = Date.now,
    private readonly fetchImpl: FetchLike = fetch,
  ) {
    this.refreshToken = oauth.refresh_token ?? null;
  }

  /** `"<type> <token>"`, fetching a new token when none is cached or it is about to expire. */
  async authorizationHeader(): Promise<string> {
    const skewMs = Math.max(this.oauth.refresh_skew_seconds, 0) * 1000;
    if (this.token && this.token.expiresAt - skewMs > this.now()) return this.token.header;
    this.inflight ??= this.fetchToken().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Drop the cached token (e.g. after the server answered 401). */
  invalidate(): void {
    this.token = null;
  }

  private body(): URLSearchParams {
    const o = this.oauth;
    // Operator extras first so the grant fields below always win.
    const form = new URLSearchParams(o.extra_token_params);
    form.set("grant_type", o.grant_type);
    if (o.scope) form.set("scope", o.scope);
    if (o.audience) form.set("audience", o.audience);
    if (o.grant_type === "client_credentials") {
      if (!o.client_id || !o.client_secret) throw new McpError(this.server, "OAuth client_credentials requires client_id and client_secret", { code: "mcp_oauth_failed" });
    } else if (!this.refreshToken) {
      throw new McpError(this.server, "OAuth refresh_token grant requires refresh_token", { code: "mcp_oauth_failed" });
    } else form.set("refresh_token", this.refreshToken);
    if (o.client_id) form.set("client_id", o.client_id);
    if (o.client_secret) form.set("client_secret", o.client_secret);
    return form;
  }

  private async fetchToken(): Promise<string> {
    const form = this.body();
    this.requests++;
    let res: Response;
    try {
      res = await this.fetchImpl(this.oauth.token_url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: form.toString(),
        signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new McpError(this.server, `OAuth token request to ${this.oauth.token_url} failed: ${errorMessage(err)}`, { code: "mcp_oauth_failed", cause: err });
    }
    const payload = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      const reason = typeof payload.error === "string" ? `${payload.error}${payload.error_description ? `: ${String(payload.error_description)}` : ""}` : `HTTP ${res.status}`;
      throw new McpError(this.server, `OAuth token endpoint refused the ${this.oauth.grant_type} grant (${reason})`, { code: "mcp_oauth_failed" });
    }
    const access = payload[this.oauth.token_field];
    if (typeof access !== "string" || !access) {
      throw new McpError(this.server, `OAuth token response has no '${this.oauth.token_field}'`, { code: "mcp_oauth_failed" });
    }
    if (this.oauth.grant_type === "refresh_token" && typeof payload.refresh_token === "string" && payload.refresh_token) {
      this.refreshToken = payload.refresh_token;
    }
    const type = String(payload[this.oauth.token_type_field] || this.oauth.default_token_type);
    const rawExpiry = Number(payload[this.oauth.expires_in_field] ?? 3600);
    const expiresIn = Number.isFinite(rawExpiry) ? Math.max(rawExpiry, 1) : 3600;
    // RFC 6750 spells the scheme "Bearer"; some servers answer lowercase and strict resource servers compare exactly.
    const scheme = type.toLowerCase() === "bearer" ? "Bearer" : type;
    this.token = { header: `${scheme} ${access}`, expiresAt: this.now() + expiresIn * 1000 };
    return this.token.header;
  }
}

/**
 * A fetch that sets `Authorization` from the token manager on every request
 * of an MCP HTTP/SSE transport, so a token about to expire is refreshed
 * before the request that would have failed. A 401 drops the cached token
 * and the request is retried once with a fresh one.
 */
export function oauthFetch(manager: OAuthTokenManager, base: FetchLike = fetch): FetchLike {
  return async (url, init = {}) => {
    const send = async () => {
      const headers = new Headers(init.headers);
      headers.set("authorization", await manager.authorizationHeader());
      return base(url, { ...init, headers });
    };
    const res = await send();
    const method = (init.method ?? "GET").toUpperCase();
    // Only requests with a replayable body are retried (streams cannot be sent twice).
    if (res.status === 401 && (method === "GET" || typeof init.body === "string" || init.body == null)) {
      manager.invalidate();
      return send();
    }
    return res;
  };
}
