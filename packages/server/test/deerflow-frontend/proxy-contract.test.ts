/**
 * The requests DeerFlow's Next.js frontend makes in auth-enabled mode, exactly as they reach the gateway,
 * without building the frontend (so CI checks them too; auth-enabled.test.ts drives the real build):
 *
 * - its server side asks `GET /api/v1/auth/setup-status` (no cookie) and `GET /api/v1/auth/me` with only
 *   `Cookie: access_token=…`, and reads the `needs_setup` / user shape to redirect to `/setup` or `/login`;
 * - the browser's calls go through Next's rewrite proxy, which keeps the page's `Origin` (the frontend's,
 *   not the gateway's) and `Sec-Fetch-Site: same-origin`, and adds `X-Forwarded-Host` (the frontend's);
 * - `logout` is posted without `X-CSRF-Token`; every other write echoes the `csrf_token` cookie in it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieJar, startAuthGateway } from "../helpers/auth-session";
import type { AuthGateway } from "../helpers/auth-session";

/** Where the frontend runs (its origin is what the browser sends as `Origin`). */
const FRONTEND = "http://127.0.0.1:3100";
const ADMIN = { email: "admin@example.com", password: "admin-password-123" };

/** The headers Next's rewrite proxy forwards for a fetch of the page at {@link FRONTEND}. */
function viaFrontend(jar: CookieJar, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { origin: FRONTEND, "sec-fetch-site": "same-origin", "x-forwarded-host": "127.0.0.1:3100", ...extra };
  if (jar.cookies.size) h.cookie = jar.header();
  return h;
}

describe("the gateway answers DeerFlow's frontend (behind its Next.js proxy) in auth-enabled mode", () => {
  let gw: AuthGateway;
  const browser = new CookieJar();
  beforeAll(async () => {
    gw = await startAuthGateway({ authSection: { registration_enabled: true } });
  });
  afterAll(async () => {
    await gw.close();
  });

  it("before any admin exists: setup-status says needs_setup and me is 401 (the frontend then shows /setup)", async () => {
    const status = await fetch(`${gw.api}/v1/auth/setup-status`);
    expect(await status.json()).toEqual({ needs_setup: true, registration_enabled: true });
    const me = await fetch(`${gw.api}/v1/auth/me`);
    expect(me.status).toBe(401);
    expect(await me.json()).toMatchObject({ detail: { code: "not_authenticated" } });
  });

  it("the setup page's initialize through the proxy is 201 with the session cookies", async () => {
    const res = await fetch(`${gw.api}/v1/auth/initialize`, {
      method: "POST",
      headers: viaFrontend(browser, { "content-type": "application/json" }),
      body: JSON.stringify({ ...ADMIN, remember_me: true }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const setCookies = res.headers.getSetCookie();
    expect(setCookies.find((c) => c.startsWith("access_token="))).toMatch(/HttpOnly/i);
    expect(setCookies.find((c) => c.startsWith("csrf_token="))).not.toMatch(/HttpOnly/i);
    browser.absorb(res);
    expect(await res.json()).toMatchObject({ email: ADMIN.email, system_role: "admin" });
  });

  it("the frontend's server-side me with only the access_token cookie answers its user schema", async () => {
    const me = await fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: `access_token=${browser.get("access_token")}` } });
    expect(me.status).toBe(200);
    const body = (await me.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["email", "id", "needs_setup", "oauth_provider", "system_role"]);
    expect(body).toMatchObject({ email: ADMIN.email, system_role: "admin", needs_setup: false, oauth_provider: null });
  });

  it("a second initialize is 409 system_already_initialized (the setup page then goes to /login)", async () => {
    const res = await fetch(`${gw.api}/v1/auth/initialize`, {
      method: "POST",
      headers: viaFrontend(new CookieJar(), { "content-type": "application/json" }),
      body: JSON.stringify({ email: "second@example.com", password: "another-password-1" }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ detail: { code: "system_already_initialized" } });
  });

  it("writes through the proxy need the X-CSRF-Token the frontend echoes from the csrf_token cookie", async () => {
    const body = JSON.stringify({ metadata: {} });
    const without = await fetch(`${gw.api}/threads`, { method: "POST", headers: viaFrontend(browser, { "content-type": "application/json" }), body });
    expect(without.status).toBe(403);
    expect(await without.json()).toEqual({ detail: "CSRF token missing. Include X-CSRF-Token header." });
    const withToken = await fetch(`${gw.api}/threads`, {
      method: "POST",
      headers: viaFrontend(browser, { "content-type": "application/json", "x-csrf-token": browser.get("csrf_token")! }),
      body,
    });
    expect(withToken.status).toBe(200);
  });

  it("the session-creating POSTs still refuse a page of another origin on the same host (same-site is not same-origin)", async () => {
    for (const site of ["same-site", "cross-site"]) {
      const res = await fetch(`${gw.api}/v1/auth/login/local`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://127.0.0.1:9999", "sec-fetch-site": site },
        body: new URLSearchParams({ username: ADMIN.email, password: ADMIN.password }).toString(),
      });
      expect(res.status, site).toBe(403);
      expect(await res.json()).toEqual({ detail: "Cross-site auth request denied." });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
  });

  it("the login page's form post through the proxy signs in; its logout (no X-CSRF-Token) ends the session", async () => {
    const login = await fetch(`${gw.api}/v1/auth/login/local`, {
      method: "POST",
      headers: viaFrontend(new CookieJar(), { "content-type": "application/x-www-form-urlencoded" }),
      body: new URLSearchParams({ password: ADMIN.password, remember_me: "true", username: ADMIN.email }).toString(),
    });
    expect(login.status).toBe(200);
    expect(await login.json()).toMatchObject({ needs_setup: false, expires_in: 7 * 86400 });
    const jar = new CookieJar();
    jar.absorb(login);
    const session = jar.get("access_token")!;
    const logout = await fetch(`${gw.api}/v1/auth/logout`, { method: "POST", headers: viaFrontend(jar) });
    expect(logout.status).toBe(200);
    jar.absorb(logout);
    expect(jar.get("access_token")).toBeUndefined();
    expect(jar.get("csrf_token")).toBeUndefined();
    const replay = await fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: `access_token=${session}` } });
    expect(replay.status).toBe(401);
  });
});
