import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpOAuthConfigSchema } from "../../src/config";
import { OAuthTokenManager } from "../../src/mcp";
import { startOAuthTokenServer } from "../../src/testing";
import type { OAuthTokenServer } from "../../src/testing";

describe("OAuthTokenManager against the local RFC 6749 token endpoint", () => {
  let clock = 1_000_000;
  const now = () => clock;
  let server: OAuthTokenServer;
  beforeAll(async () => {
    server = await startOAuthTokenServer({ clients: { app: "pw" }, refreshTokens: { "rt-1": "app" }, rotateRefreshTokens: true, expiresIn: 120, now });
  });
  afterAll(() => server.close());

  it("caches a client_credentials token and refreshes it refresh_skew_seconds before expiry; concurrent callers share one request", async () => {
    const m = new OAuthTokenManager("s", mcpOAuthConfigSchema.parse({ token_url: server.tokenUrl, client_id: "app", client_secret: "pw", audience: "api", extra_token_params: { resource: "r", grant_type: "ignored" } }), now);
    const [a, b] = await Promise.all([m.authorizationHeader(), m.authorizationHeader()]);
    expect(a).toBe(b);
    expect(a).toMatch(/^Bearer at_/);
    expect(m.requests).toBe(1);
    const last = server.requests.at(-1)!;
    expect(last).toMatchObject({ grant_type: "client_credentials", client_auth: "body", audience: "api", status: 200 });
    expect(last.params.resource).toBe("r");
    clock += 59_000; // 61 s left, skew 60 s → still fresh
    expect(await m.authorizationHeader()).toBe(a);
    clock += 2_000; // 59 s left → refresh before it expires
    const c = await m.authorizationHeader();
    expect(c).not.toBe(a);
    expect(server.isValid(c.slice(7))).toBe(true);
    expect(m.requests).toBe(2);
  });

  it("uses the refresh_token grant and keeps the rotated refresh token", async () => {
    const m = new OAuthTokenManager("s", mcpOAuthConfigSchema.parse({ token_url: server.tokenUrl, grant_type: "refresh_token", refresh_token: "rt-1", client_id: "app", client_secret: "pw", refresh_skew_seconds: 0 }), now);
    await m.authorizationHeader();
    clock += 121_000;
    await m.authorizationHeader();
    const grants = server.requests.filter((r) => r.grant_type === "refresh_token");
    expect(grants.map((g) => g.status)).toEqual([200, 200]);
    // the second refresh sent the token rotated by the first one (the endpoint revoked rt-1 and then that one)
    expect(grants[1].params.refresh_token).toMatch(/^rt_/);
    expect(server.refreshTokens).toHaveLength(1);
    expect(server.refreshTokens).not.toContain(grants[1].params.refresh_token);
  });

  it("turns endpoint errors into mcp_oauth_failed errors naming the RFC error code", async () => {
    const bad = new OAuthTokenManager("s", mcpOAuthConfigSchema.parse({ token_url: server.tokenUrl, client_id: "app", client_secret: "nope" }), now);
    await expect(bad.authorizationHeader()).rejects.toMatchObject({ code: "mcp_oauth_failed", message: expect.stringContaining("invalid_client") });
    const revoked = new OAuthTokenManager("s", mcpOAuthConfigSchema.parse({ token_url: server.tokenUrl, grant_type: "refresh_token", refresh_token: "rt-1" }), now);
    await expect(revoked.authorizationHeader()).rejects.toThrow(/invalid_grant/);
    const missing = new OAuthTokenManager("s", mcpOAuthConfigSchema.parse({ token_url: server.tokenUrl }), now);
    await expect(missing.authorizationHeader()).rejects.toThrow(/requires client_id and client_secret/);
    const res = await fetch(server.tokenUrl, { method: "POST", body: new URLSearchParams({ grant_type: "password" }) });
    expect(res.status).toBe(400);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toMatchObject({ error: "unsupported_grant_type" });
    const basic = await fetch(server.tokenUrl, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from("app:pw").toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(basic.status).toBe(200);
    expect(server.requests.at(-1)?.client_auth).toBe("basic");
  });
});
