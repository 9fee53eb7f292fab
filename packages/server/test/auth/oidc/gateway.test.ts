import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthSection } from "../../../src/auth";
import { DEFAULT_OIDC_TEST_CLIENT, startOidcProvider } from "../../../src/testing";
import type { OidcProvider } from "../../../src/testing";
import { startTestGateway } from "../../helpers/test-gateway";
import type { TestGateway } from "../../helpers/test-gateway";
import { Browser } from "./browser";
import { JWT_SECRET } from "./sso-app";

let idp: OidcProvider;
let gw: TestGateway;

/** Hand-written, so only the keys that matter here: the routes apply the config schema's defaults. */
function gwAuth(): AuthSection {
  return {
    enabled: true,
    jwt_secret: JWT_SECRET,
    oidc: {
      enabled: true,
      frontend_base_url: null,
      providers: {
        corp: { display_name: "Corp SSO", issuer: idp.issuer, client_id: DEFAULT_OIDC_TEST_CLIENT.clientId, client_secret: DEFAULT_OIDC_TEST_CLIENT.clientSecret },
      },
    },
  } as unknown as AuthSection;
}

beforeAll(async () => {
  idp = await startOidcProvider({ users: { carol: { sub: "sub-carol", email: "carol@example.com" } }, defaultUser: "carol" });
  gw = await startTestGateway({ auth: gwAuth() });
});
afterAll(async () => {
  await gw?.close();
  await idp?.close();
});

describe("OIDC through the gateway", () => {
  it("lists the provider, signs in with the gateway's session cookies, and the session works for me and writes", async () => {
    const listed = await fetch(`${gw.url}/api/v1/auth/providers`);
    expect(await listed.json()).toEqual({ providers: [{ id: "corp", display_name: "Corp SSO", type: "oidc" }] });

    const browser = new Browser();
    expect((await browser.get(`${gw.url}/api/v1/auth/me`)).status).toBe(401);
    const { res, location } = await browser.follow(`${gw.url}/api/v1/auth/oauth/corp?next=%2Fworkspace%2Fchats%2Fnew&remember_me=true`, [gw.url, idp.url]);
    expect(res.status).toBe(302);
    expect(location).toBe("/workspace/chats/new");
    const session = browser.cookie("access_token")!;
    expect(session.attributes.httponly).toBe(true);
    expect(session.attributes["max-age"]).toBe(String(7 * 86400));
    expect(browser.cookie("csrf_token")).toBeDefined();

    const me = await browser.get(`${gw.url}/api/v1/auth/me`);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ id: expect.any(String), email: "carol@example.com", system_role: "user", needs_setup: false, oauth_provider: "corp" });

    // A write with the CSRF token issued by the callback passes (the callback was a GET, so it had to set one).
    const created = await fetch(`${gw.url}/api/threads`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-csrf-token": browser.cookie("csrf_token")!.value,
        cookie: [...browser.jar.values()].filter((c) => c.path === "/").map((c) => `${c.name}=${c.value}`).join("; "),
      },
      body: "{}",
    });
    expect(created.status).toBe(200);
  });

  it("derives an https redirect URI (and a Secure state cookie) only from a trusted proxy's X-Forwarded-Proto", async () => {
    const start = async (g: TestGateway) => {
      const res = await fetch(`${g.url}/api/v1/auth/oauth/corp`, { redirect: "manual", headers: { "x-forwarded-proto": "https" } });
      expect(res.status).toBe(302);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith("df_oidc_state_corp="))!;
      return { redirectUri: new URL(res.headers.get("location")!).searchParams.get("redirect_uri"), secure: /; Secure/.test(cookie) };
    };
    expect(await start(gw)).toEqual({ redirectUri: `${gw.url}/api/v1/auth/callback/corp`, secure: false });
    const behindProxy = await startTestGateway({ auth: gwAuth(), trustedProxies: "127.0.0.1" });
    try {
      expect(await start(behindProxy)).toEqual({ redirectUri: `${behindProxy.url.replace("http:", "https:")}/api/v1/auth/callback/corp`, secure: true });
    } finally {
      await behindProxy.close();
    }
  });

  it("a browser session (remember_me=false) gets cookies without Max-Age", async () => {
    const browser = new Browser();
    await browser.follow(`${gw.url}/api/v1/auth/oauth/corp?remember_me=false`, [gw.url, idp.url]);
    expect(browser.cookie("access_token")?.attributes["max-age"]).toBeUndefined();
    expect((await browser.get(`${gw.url}/api/v1/auth/me`)).status).toBe(200);
  });
});
