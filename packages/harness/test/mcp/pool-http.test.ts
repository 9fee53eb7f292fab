import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOAuthTokenServer } from "../../src/testing";
import type { OAuthTokenServer } from "../../src/testing";
import { call, makePool } from "./_helpers";
import { startEverythingHttp, startHttpMcpServer } from "./_http-servers";

describe("McpPool over streamable HTTP and SSE (server-everything)", () => {
  let http: { url: string; stop(): Promise<void> };
  let sse: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    [http, sse] = await Promise.all([startEverythingHttp("streamableHttp"), startEverythingHttp("sse")]);
  });
  afterAll(async () => {
    await Promise.all([http?.stop(), sse?.stop()]);
  });

  it("lists and calls tools on both transports with one shared session per server", async () => {
    const h = makePool({ web: { type: "http", url: http.url }, legacy: { type: "sse", url: sse.url } });
    try {
      const tools = await h.pool.getTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["web_echo", "legacy_echo", "web_get-sum"]));
      expect((await call(tools, "web_echo", { message: "over http" })).content).toBe("Echo: over http");
      expect((await call(tools, "legacy_echo", { message: "over sse" })).content).toBe("Echo: over sse");
      const sum = await call(tools, "web_get-sum", { a: 2, b: 40 });
      expect(String(sum.content)).toContain("42");
      expect(h.pool.status().every((s) => s.connected && s.sessions === 0)).toBe(true);
    } finally {
      await h.cleanup();
    }
  });
});

describe("HTTP headers with $VAR and OAuth", () => {
  let tokens: OAuthTokenServer;
  let mcp: Awaited<ReturnType<typeof startHttpMcpServer>>;
  beforeAll(async () => {
    tokens = await startOAuthTokenServer({ clients: { deerflow: "s3cret" }, refreshTokens: { "rt-initial": "" }, rotateRefreshTokens: true, expiresIn: 2 });
    mcp = await startHttpMcpServer({ acceptToken: (t) => tokens.isValid(t) });
  });
  afterAll(async () => {
    await Promise.all([tokens?.close(), mcp?.close()]);
  });

  it("resolves $VAR headers from the environment and sends a client-credentials token on every request", async () => {
    process.env.MCP_TEST_TEAM = "blue";
    const h = makePool({
      api: {
        type: "http",
        url: mcp.url,
        headers: { "X-Team": "$MCP_TEST_TEAM" },
        oauth: { token_url: tokens.tokenUrl, grant_type: "client_credentials", client_id: "deerflow", client_secret: "s3cret", scope: "tools", refresh_skew_seconds: 0 },
      },
    });
    try {
      const tools = await h.pool.getTools();
      expect(h.pool.status()[0]).toMatchObject({ connected: true, last_error: null });
      expect((await call(tools, "api_whoami", {})).content).toBe("team=blue");
      const ok = tokens.requests.filter((r) => r.status === 200);
      expect(ok.length).toBe(1);
      expect(ok[0]).toMatchObject({ grant_type: "client_credentials", client_id: "deerflow", scope: "tools" });
      expect(mcp.rejected).toBe(0);
    } finally {
      await h.cleanup();
      delete process.env.MCP_TEST_TEAM;
    }
  });

  it("refreshes before expiry with the refresh_token grant and keeps the rotated refresh token", async () => {
    const before = tokens.requests.length;
    const h = makePool({
      api: { type: "http", url: mcp.url, oauth: { token_url: tokens.tokenUrl, grant_type: "refresh_token", refresh_token: "rt-initial", refresh_skew_seconds: 1 } },
    });
    try {
      const tools = await h.pool.getTools();
      expect((await call(tools, "api_whoami", {})).status).toBe("success");
      // tokens live 2 s and are refreshed 1 s early: after 1.1 s the next call must use a new one
      await new Promise((r) => setTimeout(r, 1100));
      expect((await call(tools, "api_whoami", {})).status).toBe("success");
      const grants = tokens.requests.slice(before);
      expect(grants.filter((g) => g.grant_type === "refresh_token" && g.status === 200).length).toBe(2);
      // the second refresh used the rotated token, not the revoked initial one
      expect(grants[1].params.refresh_token).not.toBe("rt-initial");
      expect(mcp.rejected).toBe(0);
    } finally {
      await h.cleanup();
    }
  });

  it("reports a refused grant as the server's error without touching other servers", async () => {
    const h = makePool({
      api: { type: "http", url: mcp.url, oauth: { token_url: tokens.tokenUrl, client_id: "deerflow", client_secret: "wrong" } },
    });
    try {
      expect(await h.pool.getTools()).toEqual([]);
      expect(h.pool.status()[0].last_error).toMatch(/invalid_client/);
    } finally {
      await h.cleanup();
    }
  });
});
