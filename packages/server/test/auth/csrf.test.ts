import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, initializeAdmin, postLogin, startAuthGateway } from "../helpers/auth-session";
import type { AuthGateway, SignedIn } from "../helpers/auth-session";

describe("CSRF double submit and the Origin check of the session-creating POSTs", () => {
  let gw: AuthGateway;
  let admin: SignedIn;
  beforeAll(async () => {
    gw = await startAuthGateway({ allowedOrigins: ["http://localhost:3000"] });
    admin = await initializeAdmin(gw.api);
  });
  afterAll(async () => {
    await gw.close();
  });

  const createThread = (headers: Record<string, string>) =>
    fetch(`${gw.api}/threads`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ metadata: {} }) });

  it("a POST carrying the session cookie but no X-CSRF-Token is 403 and changes nothing", async () => {
    const before = (await admin.json("POST", "/threads/search", {})).length;
    const res = await createThread({ cookie: admin.jar.header() });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: "CSRF token missing. Include X-CSRF-Token header." });
    expect((await admin.json("POST", "/threads/search", {})).length).toBe(before);
  });

  it("a wrong X-CSRF-Token is 403 mismatch", async () => {
    const res = await createThread({ cookie: admin.jar.header(), "x-csrf-token": "guessed" });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: "CSRF token mismatch." });
  });

  it("a header without the cookie is 403 missing (a foreign page cannot plant the cookie)", async () => {
    const cookies = [...admin.jar.cookies].filter(([k]) => k !== "csrf_token").map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await createThread({ cookie: cookies, "x-csrf-token": admin.csrf! });
    expect(res.status).toBe(403);
  });

  it("with the matching token the same POST passes", async () => {
    const res = await createThread({ cookie: admin.jar.header(), "x-csrf-token": admin.csrf! });
    expect(res.status).toBe(200);
  });

  it("a cross-site login POST is refused: 403 Cross-site auth request denied.", async () => {
    const res = await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { origin: "http://evil.example" });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: "Cross-site auth request denied." });
    expect(res.headers.getSetCookie()).toEqual([]);
    for (const p of ["register", "initialize", "logout"]) {
      const r = await fetch(`${gw.api}/v1/auth/${p}`, { method: "POST", headers: { "content-type": "application/json", origin: "http://evil.example" }, body: "{}" });
      expect(r.status, p).toBe(403);
      expect(await r.json()).toEqual({ detail: "Cross-site auth request denied." });
    }
  });

  it("a login from the gateway's own origin or an allowed origin passes; no Origin (curl) passes", async () => {
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { origin: gw.url })).status).toBe(200);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, {}, { origin: "http://localhost:3000" })).status).toBe(200);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(200);
  });

  it("GETs need no CSRF token", async () => {
    expect((await fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: admin.jar.header() } })).status).toBe(200);
  });
});
