import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OidcFault } from "../../../src/testing";
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

/** Run `oauth/test` and the provider's authorize step; return the callback URL without visiting it. */
async function authorize(browser: Browser, query = "next=/workspace"): Promise<string> {
  const start = await browser.get(`${app.url}/api/v1/auth/oauth/test?${query}`);
  expect(start.status).toBe(302);
  const atProvider = await browser.get(start.headers.get("location")!);
  expect(atProvider.status).toBe(302);
  return atProvider.headers.get("location")!;
}

async function signIn(browser: Browser, query = "next=/workspace") {
  return browser.follow(`${app.url}/api/v1/auth/oauth/test?${query}`, [app.url, app.provider.url]);
}

const noSession = (b: Browser) => expect(b.cookie("test_session")).toBeUndefined();

describe("the ID token's checks", () => {
  const faults: OidcFault[] = ["wrong_nonce", "wrong_audience", "wrong_issuer", "expired_token", "bad_signature"];
  for (const fault of faults) {
    it(`refuses an ID token with fault ${fault}: login?error=sso_failed, no session, no account`, async () => {
      app.provider.setFaults([fault]);
      const browser = new Browser();
      const { res, location } = await signIn(browser);
      expect(res.status).toBe(302);
      expect(location).toBe("/login?error=sso_failed");
      noSession(browser);
      expect(app.users.list()).toEqual([]);
      // The provider did hand out a token: the refusal is ours.
      expect(app.provider.requests.find((r) => r.endpoint === "token")?.status).toBe(200);
      expect(app.logs.join("\n")).toContain("oidc.id_token_invalid");
    });
  }

  it("refuses an unverified email under require_verified_email (the default)", async () => {
    app.provider.setFaults(["unverified_email"]);
    const browser = new Browser();
    expect((await signIn(browser)).location).toBe("/login?error=sso_not_allowed");
    noSession(browser);
    expect(app.users.list()).toEqual([]);
  });

  it("reports the user cancelling at the provider as sso_cancelled", async () => {
    app.provider.setFaults(["access_denied"]);
    const browser = new Browser();
    expect((await signIn(browser)).location).toBe("/login?error=sso_cancelled");
    noSession(browser);
  });
});

describe("the state binding", () => {
  it("refuses a callback whose state differs from the cookie's (403)", async () => {
    const browser = new Browser();
    const callback = new URL(await authorize(browser));
    callback.searchParams.set("state", "forged-state-value-0123456789");
    const res = await browser.get(callback.toString());
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: "OIDC state mismatch" });
    noSession(browser);
    expect(app.provider.requests.some((r) => r.endpoint === "token")).toBe(false);
  });

  it("refuses a callback without the state cookie (403): a link made in another browser does not sign this one in", async () => {
    const attacker = new Browser();
    const callback = await authorize(attacker);
    const victim = new Browser();
    const res = await victim.get(callback);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: "Missing or expired OIDC state cookie" });
    noSession(victim);
  });

  it("refuses a state cookie this server did not make, or one older than 5 minutes, or one of another provider", async () => {
    const browser = new Browser();
    const callback = await authorize(browser);
    const cookie = browser.cookie("df_oidc_state_test")!;
    browser.setCookie({ ...cookie, value: `${cookie.value.slice(0, -4)}AAAA` });
    expect((await browser.get(callback)).status).toBe(403);

    const late = new Browser();
    const lateCallback = await authorize(late);
    app.clock.offsetMs = 301_000;
    expect((await late.get(lateCallback)).status).toBe(403);
    app.clock.offsetMs = 0;

    // Provider `other`, same issuer: its callback does not accept the cookie `test` set, even renamed.
    const base = authSection(app.provider);
    app.reconfigure({ ...base, oidc: { ...base.oidc, providers: { ...base.oidc.providers, other: base.oidc.providers.test } } });
    const cross = new Browser();
    const crossCallback = new URL(await authorize(cross));
    const stolen = cross.cookie("df_oidc_state_test")!;
    cross.setCookie({ ...stolen, name: "df_oidc_state_other", path: "/api/v1/auth/callback/other" });
    const res = await cross.get(`${app.url}/api/v1/auth/callback/other${crossCallback.search}`);
    expect(res.status).toBe(403);
    noSession(cross);
  });

  it("consumes state and code: replaying the callback is refused, with or without the saved state cookie", async () => {
    const browser = new Browser();
    const callback = await authorize(browser);
    const saved = browser.cookie("df_oidc_state_test")!;
    const first = await browser.get(callback);
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("/workspace");

    // The callback deleted the state cookie, so the same URL again has no state to match.
    const again = new Browser();
    expect((await again.get(callback)).status).toBe(403);

    // With the state cookie put back, the code reaches the provider again, which refuses it (one-time codes).
    const replay = new Browser();
    replay.setCookie(saved);
    const res = await replay.get(callback);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?error=sso_failed");
    noSession(replay);
    expect(app.provider.requests.filter((r) => r.endpoint === "token").map((r) => r.status)).toEqual([200, 400]);
  });

  it("refuses a callback without code or state (400)", async () => {
    const res = await new Browser().get(`${app.url}/api/v1/auth/callback/test?state=x`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: "Missing code or state parameter" });
  });
});

describe("next", () => {
  const attempts = [
    "//evil.example/x",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(1)",
    "/\\evil.example",
    "\\\\evil.example",
    "/%2F%2Fevil.example",
    "/%5Cevil.example",
    "/\t/evil.example",
    "evil.example",
    "",
  ];
  for (const next of attempts) {
    it(`falls back to /workspace for next=${JSON.stringify(next)}`, async () => {
      const browser = new Browser();
      const { location } = await signIn(browser, `next=${encodeURIComponent(next)}`);
      expect(location).toBe("/workspace");
    });
  }

  it("keeps a same-origin path with its query", async () => {
    const { location } = await signIn(new Browser(), `next=${encodeURIComponent("/workspace/chats/abc?tab=files")}`);
    expect(location).toBe("/workspace/chats/abc?tab=files");
  });
});

describe("route answers", () => {
  it("404 when OIDC or auth is disabled; 400 for an invalid or unknown provider id", async () => {
    const base = authSection(app.provider);
    app.reconfigure({ ...base, oidc: { ...base.oidc, enabled: false } });
    for (const path of ["oauth/test", "callback/test?code=a&state=b"]) {
      const res = await new Browser().get(`${app.url}/api/v1/auth/${path}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: "SSO authentication is not enabled" });
    }
    app.reconfigure({ ...base, enabled: false });
    expect((await new Browser().get(`${app.url}/api/v1/auth/oauth/test`)).status).toBe(404);

    app.reconfigure(base);
    const invalid = await new Browser().get(`${app.url}/api/v1/auth/oauth/te.st`);
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ detail: "Invalid provider ID" });
    for (const id of ["nope", "constructor", "__proto__"]) {
      const res = await new Browser().get(`${app.url}/api/v1/auth/oauth/${id}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: `Unknown SSO provider: ${id}` });
    }
  });

  it("answers 502 when discovery fails, serves everything else meanwhile, and recovers without a restart", async () => {
    const broken = await startSsoApp({ provider: { faults: ["discovery_error"] } });
    try {
      const res = await new Browser().get(`${broken.url}/api/v1/auth/oauth/test`);
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ detail: "Failed to connect to SSO provider" });
      expect(broken.logs.join("\n")).toMatch(/OIDC discovery failed for provider 'test'/);
      expect((await fetch(`${broken.url}/api/v1/ping`)).status).toBe(200);
      broken.provider.setFaults([]);
      const { location } = await new Browser().follow(`${broken.url}/api/v1/auth/oauth/test?next=/workspace`, [broken.url, broken.provider.url]);
      expect(location).toBe("/workspace");
    } finally {
      await broken.close();
    }
  });

  it("refuses a provider reached over plain http on a non-loopback host, before sending anything (502)", async () => {
    app.reconfigure(authSection(app.provider, { issuer: "http://sso.deerflow-test.invalid" }));
    const res = await new Browser().get(`${app.url}/api/v1/auth/oauth/test`);
    expect(res.status).toBe(502);
    expect(app.logs.join("\n")).toContain("must use https");
  });
});
