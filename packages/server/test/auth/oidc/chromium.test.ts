/**
 * The sign-in round trip in real Chromium, with the provider on another site
 * than the gateway (the gateway is browsed as `localhost`, the provider
 * double answers on `127.0.0.1`): the provider's redirect back is then a
 * cross-site navigation, which is what the state cookie's SameSite=Lax has
 * to survive, and the session cookies set on it must be usable afterwards.
 */
import fs from "node:fs";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthSection } from "../../../src/auth";
import { DEFAULT_OIDC_TEST_CLIENT, startOidcProvider } from "../../../src/testing";
import type { OidcProvider } from "../../../src/testing";
import { startTestGateway } from "../../helpers/test-gateway";
import type { TestGateway } from "../../helpers/test-gateway";
import { JWT_SECRET } from "./sso-app";

const CHROMIUM = "/usr/bin/chromium";
const SKIP = fs.existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install -y chromium)`;

let idp: OidcProvider;
let gw: TestGateway;
let browser: Browser;
let site: string;

beforeAll(async () => {
  if (SKIP) return;
  idp = await startOidcProvider({ users: { dana: { sub: "sub-dana", email: "dana@example.com" } }, defaultUser: "dana" });
  gw = await startTestGateway({
    auth: {
      enabled: true,
      jwt_secret: JWT_SECRET,
      oidc: { enabled: true, providers: { corp: { display_name: "Corp", issuer: idp.issuer, client_id: DEFAULT_OIDC_TEST_CLIENT.clientId, client_secret: DEFAULT_OIDC_TEST_CLIENT.clientSecret } } },
    } as unknown as AuthSection,
  });
  site = gw.url.replace("127.0.0.1", "localhost");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await idp?.close();
});

describe.skipIf(SKIP)("OIDC sign-in in Chromium", () => {
  it("goes to the provider and back (cross-site), lands on next and is signed in", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const visited: string[] = [];
      page.on("request", (r) => {
        if (r.isNavigationRequest()) visited.push(new URL(r.url()).origin + new URL(r.url()).pathname);
      });
      // Started from a page of the provider's site, as when the user signs in there: every hop of the chain is
      // then initiated cross-site, and the callback carries only cookies a cross-site navigation may carry.
      await page.goto(`${idp.url}/`);
      const start = `${site}/api/v1/auth/oauth/corp?next=${encodeURIComponent("/workspace/chats/new")}&remember_me=true`;
      await Promise.all([page.waitForURL(`${site}/workspace/chats/new`, { timeout: 10_000 }), page.evaluate((u) => void (window.location.href = u), start)]);
      expect(visited).toEqual([`${idp.url}/`, `${site}/api/v1/auth/oauth/corp`, `${idp.url}/authorize`, `${site}/api/v1/auth/callback/corp`, `${site}/workspace/chats/new`]);
      const me = await page.evaluate(async () => {
        const res = await fetch("/api/v1/auth/me", { credentials: "include" });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      });
      expect(me).toEqual({ status: 200, body: expect.objectContaining({ email: "dana@example.com", oauth_provider: "corp" }) });
      const cookies = await context.cookies(site);
      expect(cookies.map((c) => c.name).sort()).toEqual(["access_token", "csrf_token", "deerflow_session_persistent"]);
    } finally {
      await context.close();
    }
  });

  it("a callback link opened in another browser (no state cookie) does not sign it in", async () => {
    const starter = await browser.newContext();
    const victim = await browser.newContext();
    try {
      // The starter's steps up to the provider's answer (context.request shares the context's cookies):
      // the callback URL with a fresh code, not yet visited.
      const toProvider = await starter.request.get(`${site}/api/v1/auth/oauth/corp`, { maxRedirects: 0 });
      const atProvider = await starter.request.get(toProvider.headers().location, { maxRedirects: 0 });
      const callback = atProvider.headers().location;
      expect(callback).toContain("code=");
      const other = await victim.newPage();
      const res = await other.goto(callback);
      expect(res?.status()).toBe(403);
      expect(await victim.cookies(site)).toEqual([]);
      // The same link in the browser that started the sign-in works: the state cookie is what binds it.
      const page = await starter.newPage();
      await page.goto(callback);
      expect(new URL(page.url()).pathname).toBe("/workspace");
      expect((await starter.cookies(site)).map((c) => c.name)).toContain("access_token");
    } finally {
      await starter.close();
      await victim.close();
    }
  });
});
