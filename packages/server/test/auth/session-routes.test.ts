import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, initializeAdmin, postLogin, SignedIn, signIn, startAuthGateway, USER_PASSWORD } from "../helpers/auth-session";
import type { AuthGateway } from "../helpers/auth-session";

function cookieLine(res: Response, name: string): string {
  const line = res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie in ${JSON.stringify(res.headers.getSetCookie())}`);
  return line;
}

describe("sign-in routes (auth enabled)", () => {
  let gw: AuthGateway;
  beforeEach(async () => {
    gw = await startAuthGateway({ authSection: { registration_enabled: true } });
  });
  afterEach(async () => {
    await gw.close();
  });

  it("setup-status says needs_setup until initialize creates the admin; initialize signs in; a second initialize is 409", async () => {
    expect(await (await fetch(`${gw.api}/v1/auth/setup-status`)).json()).toEqual({ needs_setup: true, registration_enabled: true });
    const res = await fetch(`${gw.api}/v1/auth/initialize`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "Admin@Example.com", password: ADMIN_PASSWORD }),
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ email: "Admin@Example.com", system_role: "admin", needs_setup: false, oauth_provider: null });
    expect(typeof body.id).toBe("string");
    const admin = new SignedIn(gw.api);
    admin.jar.absorb(res);
    expect(await admin.json("GET", "/v1/auth/me")).toEqual({ id: body.id, email: "Admin@Example.com", system_role: "admin", needs_setup: false, oauth_provider: null });
    expect(await (await fetch(`${gw.api}/v1/auth/setup-status`)).json()).toEqual({ needs_setup: false, registration_enabled: true });
    const again = await fetch(`${gw.api}/v1/auth/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "b@example.com", password: ADMIN_PASSWORD }) });
    expect(again.status).toBe(409);
    expect((await again.json()).detail).toEqual({ code: "system_already_initialized", message: "System already initialized" });
  });

  it("concurrent initialize calls make exactly one admin", async () => {
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        fetch(`${gw.api}/v1/auth/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: `a${i}@example.com`, password: ADMIN_PASSWORD }) }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    expect(gw.users.countAdmins()).toBe(1);
  });

  it("login sets DeerFlow's cookies with their flags and answers expires_in = session_days·86400", async () => {
    await initializeAdmin(gw.api);
    const res = await postLogin(gw.api, "ADMIN@example.com", ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ expires_in: 7 * 86400, needs_setup: false });
    const access = cookieLine(res, "access_token");
    expect(access).toMatch(/HttpOnly/);
    expect(access).toMatch(/SameSite=Lax/);
    expect(access).toMatch(/Max-Age=604800/);
    expect(access).toMatch(/Path=\//);
    expect(access).not.toMatch(/Secure/); // plain http to loopback
    const csrf = cookieLine(res, "csrf_token");
    expect(csrf).not.toMatch(/HttpOnly/);
    expect(csrf).toMatch(/SameSite=Strict/);
    expect(csrf).toMatch(/Max-Age=604800/);
    expect(cookieLine(res, "deerflow_session_persistent")).toMatch(/^deerflow_session_persistent=1;.*HttpOnly/);
    // the JWT carries DeerFlow's claims
    const jwt = access.split(";")[0]!.slice("access_token=".length);
    const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());
    expect(Object.keys(claims).sort()).toEqual(["exp", "iat", "sub", "ver"]);
    expect(claims.exp - claims.iat).toBe(7 * 86400);
    expect(JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString()).alg).toBe("HS256");
  });

  it("remember_me=false gives browser-session cookies (no Max-Age) and persistent=0", async () => {
    await initializeAdmin(gw.api);
    const res = await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD, { remember_me: "false" });
    expect(res.status).toBe(200);
    for (const name of ["access_token", "csrf_token", "deerflow_session_persistent"]) expect(cookieLine(res, name)).not.toMatch(/Max-Age/);
    expect(cookieLine(res, "deerflow_session_persistent")).toMatch(/^deerflow_session_persistent=0;/);
  });

  it("a failed login is 401 with the same answer for an unknown email and a wrong password", async () => {
    await initializeAdmin(gw.api);
    const wrong = await postLogin(gw.api, "admin@example.com", "not-the-password");
    const unknown = await postLogin(gw.api, "nobody@example.com", "not-the-password");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const a = await wrong.text();
    expect(a).toBe(await unknown.text());
    expect(JSON.parse(a)).toEqual({ detail: { code: "invalid_credentials", message: "Incorrect email or password" } });
    expect(wrong.headers.getSetCookie()).toEqual([]);
  });

  it("login without the form fields is 422", async () => {
    const res = await fetch(`${gw.api}/v1/auth/login/local`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "username=a%40b.c" });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(["body", "password"]);
  });

  it("every protected route is 401 with DeerFlow's codes: no cookie, junk, wrong signature, expired, deleted user", async () => {
    const admin = await initializeAdmin(gw.api);
    const get = (cookie?: string) => fetch(`${gw.api}/v1/auth/me`, { headers: cookie ? { cookie } : {} });
    const code = async (r: Response) => {
      expect(r.status).toBe(401);
      return ((await r.json()) as { detail: { code: string } }).detail.code;
    };
    expect(await code(await get())).toBe("not_authenticated");
    expect(await code(await fetch(`${gw.api}/threads/search`, { method: "POST", headers: { "content-type": "application/json", cookie: "csrf_token=x", "x-csrf-token": "x" }, body: "{}" }))).toBe("not_authenticated");
    expect(await code(await get("access_token=junk"))).toBe("token_invalid");
    const jwt = admin.jar.get("access_token")!;
    const [h, p] = jwt.split(".");
    expect(await code(await get(`access_token=${h}.${p}.AAAA`))).toBe("token_invalid");
    // alg none is refused
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${p}.`;
    expect(await code(await get(`access_token=${none}`))).toBe("token_invalid");
    expect((await get(`access_token=${jwt}`)).status).toBe(200);
    gw.clock.advance(7 * 86400 * 1000 + 1000);
    expect(await code(await get(`access_token=${jwt}`))).toBe("token_expired");
  });

  it("a deleted account's session is 401 user_not_found", async () => {
    const admin = await initializeAdmin(gw.api);
    const u = await admin.json("POST", "/v1/auth/users", { email: "u@example.com", password: USER_PASSWORD, system_role: "user" }, 201);
    const user = await signIn(gw.api, "u@example.com", USER_PASSWORD);
    await admin.json("DELETE", `/v1/auth/users/${u.id}`);
    const res = await user.send("GET", "/v1/auth/me");
    expect(res.status).toBe(401);
    expect((await res.json()).detail.code).toBe("user_not_found");
  });

  it("logout clears the cookies and revokes the session server-side: the old cookie is 401 at once", async () => {
    const admin = await initializeAdmin(gw.api);
    const stolen = admin.jar.header();
    const res = await admin.send("POST", "/v1/auth/logout");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ message: "Successfully logged out" });
    for (const name of ["access_token", "csrf_token", "deerflow_session_persistent"]) expect(cookieLine(res, name)).toMatch(/Max-Age=0/);
    const replay = await fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: stolen } });
    expect(replay.status).toBe(401);
    expect((await replay.json()).detail.code).toBe("token_invalid");
    // signing in again works
    expect((await (await signIn(gw.api, "admin@example.com", ADMIN_PASSWORD)).send("GET", "/v1/auth/me")).status).toBe(200);
  });

  it("logout without a session still answers 200 (public)", async () => {
    const res = await fetch(`${gw.api}/v1/auth/logout`, { method: "POST" });
    expect(res.status).toBe(200);
  });

  it("register creates a `user` and signs it in; an existing email (any case) is 400", async () => {
    await initializeAdmin(gw.api);
    const res = await fetch(`${gw.api}/v1/auth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "new@example.com", password: USER_PASSWORD }) });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ email: "new@example.com", system_role: "user", needs_setup: false, oauth_provider: null });
    const s = new SignedIn(gw.api);
    s.jar.absorb(res);
    expect(s.csrf).toBeTruthy();
    expect((await s.json("GET", "/v1/auth/me")).system_role).toBe("user");
    const dup = await fetch(`${gw.api}/v1/auth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "NEW@example.com", password: USER_PASSWORD }) });
    expect(dup.status).toBe(400);
    expect((await dup.json()).detail).toEqual({ code: "email_already_exists", message: "Email already registered" });
  });

  it("register refuses short and common passwords with 422", async () => {
    for (const password of ["short", "Password123", "12345678"]) {
      const res = await fetch(`${gw.api}/v1/auth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "x@example.com", password }) });
      expect(res.status, password).toBe(422);
    }
  });

  it("change-password needs the current password, revokes old sessions at once and re-issues the cookies", async () => {
    const admin = await initializeAdmin(gw.api);
    const other = await signIn(gw.api, "admin@example.com", ADMIN_PASSWORD);
    const wrong = await admin.send("POST", "/v1/auth/change-password", { current_password: "nope-nope-nope", new_password: "a-brand-new-passphrase" });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).detail.code).toBe("invalid_credentials");
    const oldCookie = admin.jar.header();
    const ok = await admin.send("POST", "/v1/auth/change-password", { current_password: ADMIN_PASSWORD, new_password: "a-brand-new-passphrase" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ message: "Password changed successfully" });
    // the answering browser got a fresh session; every other copy is dead
    expect((await admin.send("GET", "/v1/auth/me")).status).toBe(200);
    expect((await fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: oldCookie } })).status).toBe(401);
    expect((await other.send("GET", "/v1/auth/me")).status).toBe(401);
    expect((await postLogin(gw.api, "admin@example.com", ADMIN_PASSWORD)).status).toBe(401);
    expect((await postLogin(gw.api, "admin@example.com", "a-brand-new-passphrase")).status).toBe(200);
  });

  it("change-password with new_email changes the sign-in email", async () => {
    const admin = await initializeAdmin(gw.api);
    await admin.json("POST", "/v1/auth/change-password", { current_password: ADMIN_PASSWORD, new_password: "a-brand-new-passphrase", new_email: "boss@example.com" });
    expect((await admin.json("GET", "/v1/auth/me")).email).toBe("boss@example.com");
    expect((await postLogin(gw.api, "boss@example.com", "a-brand-new-passphrase")).status).toBe(200);
  });

  it("auth answers are never cached", async () => {
    const admin = await initializeAdmin(gw.api);
    expect((await admin.send("GET", "/v1/auth/me")).headers.get("cache-control")).toBe("no-store");
    const t = await admin.send("POST", "/v1/auth/tokens", { name: "x", scopes: ["read"] });
    expect(t.status).toBe(201);
    expect(t.headers.get("cache-control")).toBe("no-store");
  });

  it("an Authorization header that is not a dfp_ token (a proxy's Basic auth) leaves the session cookie in charge", async () => {
    const admin = await initializeAdmin(gw.api);
    const withBasic = await fetch(`${gw.api}/v1/auth/me`, { headers: { cookie: admin.jar.header(), authorization: "Basic dXNlcjpwYXNz" } });
    expect(withBasic.status).toBe(200);
    const withoutCookie = await fetch(`${gw.api}/v1/auth/me`, { headers: { authorization: "Bearer some-proxy-token" } });
    expect(withoutCookie.status).toBe(401);
    expect((await withoutCookie.json()).detail.code).toBe("not_authenticated");
  });

  it("providers lists none without OIDC", async () => {
    expect(await (await fetch(`${gw.api}/v1/auth/providers`)).json()).toEqual({ providers: [] });
  });

  it("the same routes answer under /api/langgraph", async () => {
    const admin = await initializeAdmin(gw.api);
    const res = await fetch(`${gw.url}/api/langgraph/v1/auth/me`, { headers: { cookie: admin.jar.header() } });
    expect(res.status).toBe(200);
    expect((await fetch(`${gw.url}/api/langgraph/models`)).status).toBe(401);
    // CSRF is checked before the session: a write without the token is 403 even when signed out
    const write = await fetch(`${gw.url}/api/langgraph/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(write.status).toBe(403);
    expect(await write.json()).toEqual({ detail: "CSRF token missing. Include X-CSRF-Token header." });
  });
});

describe("registration off (the default)", () => {
  let gw: AuthGateway;
  beforeEach(async () => {
    gw = await startAuthGateway();
  });
  afterEach(async () => {
    await gw.close();
  });

  it("register is 403 registration_disabled; setup-status says so", async () => {
    await initializeAdmin(gw.api);
    expect(await (await fetch(`${gw.api}/v1/auth/setup-status`)).json()).toEqual({ needs_setup: false, registration_enabled: false });
    const res = await fetch(`${gw.api}/v1/auth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "x@example.com", password: USER_PASSWORD }) });
    expect(res.status).toBe(403);
    expect((await res.json()).detail.code).toBe("registration_disabled");
    expect(gw.users.list().map((u) => u.email)).toEqual(["admin@example.com"]);
  });
});
