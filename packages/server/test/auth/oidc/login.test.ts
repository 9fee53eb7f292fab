import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Browser } from "./browser";
import { authSection, startSsoApp } from "./sso-app";
import type { SsoApp } from "./sso-app";

let app: SsoApp;
beforeAll(async () => {
  app = await startSsoApp();
});
beforeEach(() => app.reset());
afterAll(async () => {
  await app.close();
});

/** Start a sign-in in `browser` and follow it through the provider back to the frontend redirect. */
async function signIn(browser: Browser, query = "next=%2Fworkspace%2Fchats%2Fnew&remember_me=true", provider = "test") {
  const { res, location } = await browser.follow(`${app.url}/api/v1/auth/oauth/${provider}?${query}`, [app.url, app.provider.url]);
  return { status: res.status, location };
}

async function me(browser: Browser) {
  const res = await browser.get(`${app.url}/api/v1/auth/me`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("OIDC sign-in round trip", () => {
  it("signs a new user in through the provider and lands on next; me shows oauth_provider", async () => {
    const browser = new Browser();
    const { status, location } = await signIn(browser);
    expect(status).toBe(302);
    expect(location).toBe("/workspace/chats/new");
    expect(await me(browser)).toEqual({
      status: 200,
      body: { id: expect.any(String), email: "alice@example.com", system_role: "user", needs_setup: false, oauth_provider: "test" },
    });
    const account = app.users.getByOauth("test", "sub-alice")!;
    expect(account.email).toBe("alice@example.com");
    expect(account.hasPassword).toBe(false);

    // What went over the wire: code flow, S256 PKCE, nonce, state; the code redeemed with client_secret_post.
    const authorize = app.provider.requests.find((r) => r.endpoint === "authorize")!;
    expect(authorize.params).toMatchObject({ response_type: "code", client_id: "deerflow-test", code_challenge_method: "S256", scope: "openid email profile" });
    expect(authorize.params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.params.nonce?.length).toBeGreaterThanOrEqual(20);
    expect(authorize.params.state?.length).toBeGreaterThanOrEqual(20);
    expect(authorize.params.redirect_uri).toBe(`${app.url}/api/v1/auth/callback/test`);
    const token = app.provider.requests.find((r) => r.endpoint === "token")!;
    expect(token).toMatchObject({ status: 200, clientAuth: "client_secret_post" });
    expect(token.params.code_verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);

    // The state cookie: HttpOnly, SameSite=Lax, scoped to the callback, short-lived, consumed by the callback.
    const start = browser.hops[0];
    expect(start.status).toBe(302);
    const stateCookie = start.setCookies.find((c) => c.startsWith("df_oidc_state_test="))!;
    expect(stateCookie).toMatch(/; HttpOnly/);
    expect(stateCookie).toMatch(/; SameSite=Lax/);
    expect(stateCookie).toMatch(/; Path=\/api\/v1\/auth\/callback\/test/);
    expect(stateCookie).toMatch(/; Max-Age=300/);
    // Encrypted: neither the nonce nor the verifier is readable in the browser.
    expect(stateCookie).not.toContain(authorize.params.nonce!);
    expect(browser.cookie("df_oidc_state_test")).toBeUndefined();
  });

  it("authenticates with client_secret_basic when configured", async () => {
    app.reconfigure(authSection(app.provider, { token_endpoint_auth_method: "client_secret_basic" }));
    const browser = new Browser();
    expect((await signIn(browser)).location).toBe("/workspace/chats/new");
    const token = app.provider.requests.find((r) => r.endpoint === "token")!;
    expect(token.clientAuth).toBe("client_secret_basic");
    expect(token.params.client_secret).toBeUndefined();
  });

  it("finds the same account on the next sign-in by (provider, subject), even after the email changed at the provider", async () => {
    const first = new Browser();
    await signIn(first);
    const id = (await me(first)).body.id;
    app.provider.addUser("alice", { sub: "sub-alice", email: "alice.new@example.com" });
    const second = new Browser();
    expect((await signIn(second)).location).toBe("/workspace/chats/new");
    expect((await me(second)).body.id).toBe(id);
    expect(app.users.list()).toHaveLength(1);
  });

  it("works without PKCE and nonce when the provider entry turns them off", async () => {
    app.reconfigure(authSection(app.provider, { pkce_enabled: false, nonce_enabled: false }));
    const browser = new Browser();
    expect((await signIn(browser)).location).toBe("/workspace/chats/new");
    const authorize = app.provider.requests.find((r) => r.endpoint === "authorize")!;
    expect(authorize.params.code_challenge).toBeUndefined();
    expect(authorize.params.nonce).toBeUndefined();
    expect((await me(browser)).status).toBe(200);
  });

  it("uses a configured redirect_uri and frontend_base_url", async () => {
    app.reconfigure(authSection(app.provider, { redirect_uri: `${app.url}/api/v1/auth/callback/test` }, { frontend_base_url: "http://localhost:3000/" }));
    const browser = new Browser();
    const { location } = await signIn(browser, "next=/workspace");
    expect(location).toBe("http://localhost:3000/workspace");
    app.provider.setFaults(["wrong_nonce"]);
    expect((await signIn(new Browser(), "next=/workspace")).location).toBe("http://localhost:3000/login?error=sso_failed");
  });

  it("works with an issuer below a path and ES256 ID tokens", async () => {
    const other = await startSsoApp({ provider: { issuerPath: "/realms/test", alg: "ES256" } });
    try {
      const browser = new Browser();
      const { location } = await browser.follow(`${other.url}/api/v1/auth/oauth/test?next=/workspace`, [other.url, other.provider.url]);
      expect(location).toBe("/workspace");
      expect(other.provider.issuer).toMatch(/\/realms\/test$/);
      const res = await browser.get(`${other.url}/api/v1/auth/me`);
      expect(((await res.json()) as { oauth_provider: string }).oauth_provider).toBe("test");
    } finally {
      await other.close();
    }
  });
});
