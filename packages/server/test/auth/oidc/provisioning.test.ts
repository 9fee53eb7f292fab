import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { listOidcProviders } from "../../../src/auth/oidc";
import { Browser } from "./browser";
import { authSection, startSsoApp } from "./sso-app";
import type { SsoApp } from "./sso-app";

let app: SsoApp;
beforeAll(async () => {
  app = await startSsoApp();
  app.provider.addUser("root", { sub: "sub-root", email: "Root@Example.com" });
  app.provider.addUser("fake-root", { sub: "sub-fake-root", email: "root@example.com", emailVerified: false });
});
beforeEach(() => app.reset());
afterAll(async () => {
  await app.close();
});

async function signInAs(login: string, policy: Record<string, unknown> = {}) {
  app.provider.selectUser(login);
  app.reconfigure(authSection(app.provider, policy));
  const browser = new Browser();
  const { location } = await browser.follow(`${app.url}/api/v1/auth/oauth/test?next=/workspace`, [app.url, app.provider.url]);
  const me = await browser.get(`${app.url}/api/v1/auth/me`);
  return { location, me: me.status === 200 ? ((await me.json()) as { id: string; email: string; system_role: string; oauth_provider: string | null }) : null };
}

describe("provisioning policy", () => {
  it("admin_emails makes a new account admin (case-insensitive); others become users", async () => {
    const root = await signInAs("root", { admin_emails: ["root@example.com"] });
    expect(root.location).toBe("/workspace");
    expect(root.me).toMatchObject({ email: "root@example.com", system_role: "admin", oauth_provider: "test" });
    const alice = await signInAs("alice", { admin_emails: ["root@example.com"] });
    expect(alice.me?.system_role).toBe("user");
  });

  it("an unverified claim of an admin's address never grants admin, even with require_verified_email off", async () => {
    const fake = await signInAs("fake-root", { admin_emails: ["root@example.com"], require_verified_email: false });
    expect(fake.location).toBe("/workspace");
    expect(fake.me?.system_role).toBe("user");
  });

  it("require_verified_email refuses an unverified email unless turned off", async () => {
    const refused = await signInAs("bob");
    expect(refused).toEqual({ location: "/login?error=sso_not_allowed", me: null });
    expect(app.users.list()).toEqual([]);
    const allowed = await signInAs("bob", { require_verified_email: false });
    expect(allowed.me).toMatchObject({ email: "bob@other.org", system_role: "user" });
  });

  it("allowed_email_domains admits only the listed domains (a leading @ and case ignored), at every sign-in", async () => {
    expect(await signInAs("alice", { allowed_email_domains: ["other.org"] })).toEqual({ location: "/login?error=sso_not_allowed", me: null });
    expect(app.users.list()).toEqual([]);
    const ok = await signInAs("alice", { allowed_email_domains: ["@EXAMPLE.com", "other.org"] });
    expect(ok.me?.email).toBe("alice@example.com");
    // Narrowing the list later locks the existing account out too.
    expect((await signInAs("alice", { allowed_email_domains: ["other.org"] })).location).toBe("/login?error=sso_not_allowed");
    // A look-alike domain is not a match.
    app.provider.addUser("mallory", { sub: "sub-mallory", email: "mallory@evilexample.com" });
    expect((await signInAs("mallory", { allowed_email_domains: ["example.com"] })).location).toBe("/login?error=sso_not_allowed");
  });

  it("auto_create_users: false refuses unknown identities but still signs in a linked account", async () => {
    expect(await signInAs("alice", { auto_create_users: false })).toEqual({ location: "/login?error=sso_not_allowed", me: null });
    expect(app.users.list()).toEqual([]);
    const linked = await app.users.create({ email: "alice@example.com", systemRole: "user", oauthProvider: "test", oauthSubject: "sub-alice" });
    const again = await signInAs("alice", { auto_create_users: false });
    expect(again.me?.id).toBe(linked.id);
  });

  it("never links to an existing account by email: a local password account with the same email is refused and left alone", async () => {
    const local = await app.users.create({ email: "Alice@example.com", password: "correct horse battery staple", systemRole: "admin" });
    expect(await signInAs("alice")).toEqual({ location: "/login?error=sso_account_exists", me: null });
    const after = app.users.getById(local.id)!;
    expect(after).toMatchObject({ oauthProvider: null, oauthSubject: null, systemRole: "admin", tokenVersion: local.tokenVersion });
    expect(app.users.list()).toHaveLength(1);
    expect(app.logs.join("\n")).toContain("oidc.account_exists");
  });

  it("refuses an identity whose email belongs to an account linked to another subject", async () => {
    await app.users.create({ email: "alice@example.com", systemRole: "user", oauthProvider: "corp", oauthSubject: "someone-else" });
    expect((await signInAs("alice")).location).toBe("/login?error=sso_account_exists");
  });

  it("refuses an email with terminal escapes or invisible format characters, and logs it escaped", async () => {
    // Such an address would rewrite the admin's terminal in `deerflow users list` and the gateway's log, or
    // show as another address (a right-to-left override) on the Users page.
    app.provider.addUser("escape", { sub: "sub-escape", email: "\u001b[2K\u001b]0;owned\u0007eve@example.com" });
    app.provider.addUser("bidi", { sub: "sub-bidi", email: "eve\u202e@example.com" });
    app.provider.addUser("zero-width", { sub: "sub-zw", email: "ad\u200bmin@example.com" });
    for (const login of ["escape", "bidi", "zero-width"]) {
      expect(await signInAs(login), login).toEqual({ location: "/login?error=sso_not_allowed", me: null });
    }
    expect(app.users.list()).toEqual([]);
    expect(app.logs.join("\n")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(app.logs.join("\n")).toContain("\\u001b[2k");
  });

  it("two simultaneous first sign-ins of one identity end in one account", async () => {
    app.reconfigure(authSection(app.provider));
    const browsers = [new Browser(), new Browser()];
    const callbacks: string[] = [];
    for (const b of browsers) {
      const start = await b.get(`${app.url}/api/v1/auth/oauth/test?next=/workspace`);
      const at = await b.get(start.headers.get("location")!);
      callbacks.push(at.headers.get("location")!);
    }
    const answers = await Promise.all(browsers.map((b, i) => b.get(callbacks[i])));
    expect(answers.map((r) => r.headers.get("location"))).toEqual(["/workspace", "/workspace"]);
    expect(app.users.list()).toHaveLength(1);
  });
});

describe("a hand-written auth section (not parsed from config.yaml)", () => {
  it("still gets the schema's defaults: require_verified_email is on, PKCE and nonce are used", async () => {
    app.provider.selectUser("bob");
    app.reconfigureRaw(authSection(app.provider));
    const refused = await new Browser().follow(`${app.url}/api/v1/auth/oauth/test`, [app.url, app.provider.url]);
    expect(refused.location).toBe("/login?error=sso_not_allowed");
    const authorize = app.provider.requests.find((r) => r.endpoint === "authorize")!;
    expect(authorize.params).toMatchObject({ code_challenge_method: "S256", scope: "openid email profile" });
    expect(authorize.params.nonce).toBeTruthy();
  });

  it("answers 503 naming the key when the provider entry is invalid", async () => {
    app.reconfigureRaw(authSection(app.provider, { issuer: "not a url" }));
    const res = await new Browser().get(`${app.url}/api/v1/auth/oauth/test`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/auth\.oidc\.providers\.test\.issuer/);
  });
});

describe("listOidcProviders", () => {
  it("lists id, display_name and type of each provider, nothing when OIDC or auth is off", () => {
    const base = authSection(app.provider);
    app.reconfigure({ ...base, oidc: { ...base.oidc, providers: { ...base.oidc.providers, "bad id": base.oidc.providers.test } } });
    expect(listOidcProviders(app.settings)).toEqual([{ id: "test", display_name: "Test IdP", type: "oidc" }]);
    app.reconfigure({ ...base, oidc: { ...base.oidc, enabled: false } });
    expect(listOidcProviders(app.settings)).toEqual([]);
    app.reconfigure({ ...base, enabled: false });
    expect(listOidcProviders(app.settings)).toEqual([]);
  });
});
