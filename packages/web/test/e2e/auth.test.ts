/**
 * End-to-end in headless Chromium against the real gateway with sign-in on (accounts in the
 * gateway's auth.db, cookie sessions, CSRF, tokens): first-run setup, a chat run, reload,
 * personal access tokens used with `Authorization: Bearer`, the Users page, sign-out, a wrong
 * password, the lockout, a `user` account without admin pages, `next` kept across the login
 * (and refused when it leaves the site), and a 401 mid-session. Then the same UI with auth
 * disabled: no login, no sign-out.
 */
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_OIDC_TEST_CLIENT, startOidcProvider } from "@deerflow-ts/server/testing";
import type { OidcProvider } from "@deerflow-ts/server/testing";
import { buildWebDist, CHROMIUM, chromiumAvailable, teardown, WEB_ROOT } from "./browser";
import { authEnabledSection, startScriptedGateway, type ScriptedGateway } from "./scripted-gateway";

const hasChromium = chromiumAvailable("sign-in UI");
const shots = path.resolve(WEB_ROOT, "../../docs/screenshots");

const ADMIN = { email: "admin@example.com", password: "violet-harbour-kettle-42" };
const BOB = { email: "bob@example.com", password: "amber-orchard-lantern-7" };

/** Screenshots for the docs: taken on every run, written to docs/screenshots only with UPDATE_SCREENSHOTS=1. */
async function shot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot();
  expect(png.length).toBeGreaterThan(1000);
  if (process.env.UPDATE_SCREENSHOTS === "1") {
    fs.mkdirSync(shots, { recursive: true });
    fs.writeFileSync(path.join(shots, `${name}.png`), png);
  }
}

async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"],
  });
}

async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on("pageerror", (e) => console.error("[page error]", e.message));
  return { context, page };
}

async function signIn(page: Page, who: { email: string; password: string }): Promise<void> {
  const form = page.getByRole("form", { name: "Sign in" });
  await form.getByLabel("Email").fill(who.email);
  await form.getByLabel("Password").fill(who.password);
  await form.getByRole("button", { name: "Sign in" }).click();
}

async function topBarLabels(page: Page): Promise<string[]> {
  return page.locator("header.topbar button").evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") ?? ""));
}

describe.skipIf(!hasChromium)("sign-in UI e2e (headless Chromium, real gateway with auth on)", () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-auth-dist-"));
  let server: ScriptedGateway;
  let browser: Browser;
  let admin: { context: BrowserContext; page: Page };
  /** Every write the admin's page sent to the API, with the CSRF header it carried. */
  const writes: Array<{ method: string; path: string; csrf: string | undefined }> = [];

  beforeAll(async () => {
    buildWebDist(dist);
    server = await startScriptedGateway(dist, {
      // One SSO provider, so the login page shows its button (it is never followed here).
      auth: authEnabledSection({ oidc: { enabled: true, providers: { corp: { display_name: "Corp SSO", issuer: "http://127.0.0.1:9", client_id: "deerflow", client_secret: "e2e-client-secret" } } } }),
    });
    browser = await launch();
    admin = await newPage(browser);
    admin.page.on("request", (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith("/api/") && !["GET", "HEAD"].includes(r.method())) writes.push({ method: r.method(), path: u.pathname, csrf: r.headers()["x-csrf-token"] });
    });
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, server], dist);
  });

  it("first-run setup creates the admin, lands in the chat, and a chat run works", async () => {
    const { page, context } = admin;
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/setup`);
    const form = page.getByRole("form", { name: "Create the administrator" });
    await form.getByLabel("Email").fill(ADMIN.email);
    await form.getByLabel("Password", { exact: true }).fill(ADMIN.password);
    await form.getByLabel("Confirm password").fill("something else entirely");
    await form.getByRole("button", { name: "Create administrator" }).click();
    expect(await page.getByTestId("auth-error").textContent()).toBe("The passwords do not match.");
    await form.getByLabel("Confirm password").fill(ADMIN.password);
    await shot(page, "setup");
    await form.getByRole("button", { name: "Create administrator" }).click();

    await page.waitForURL(`${server.url}/`);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("hello there");
    await box.press("Enter");
    await page.getByTestId("assistant-message").getByText("Hello!").waitFor();
    // The session is the HttpOnly JWT cookie plus the script-readable CSRF cookie.
    const cookies = Object.fromEntries((await context.cookies()).map((c) => [c.name, c]));
    expect(cookies.access_token?.httpOnly).toBe(true);
    expect(cookies.csrf_token?.httpOnly).toBe(false);
    // The admin sees the admin pages, Users and Account, and can sign out.
    expect(await topBarLabels(page)).toEqual(expect.arrayContaining(["Skills", "MCP", "Memory", "Users", "Account", "Sign out"]));
    // A second initialize is refused by the gateway: the setup page now sends a visitor on.
    const again = await fetch(`${server.url}/api/v1/auth/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "x@example.com", password: "another-long-pass-1" }) });
    expect(again.status).toBe(409);
  });

  it("a reload keeps the session and the conversation", async () => {
    const { page } = admin;
    await page.waitForFunction(() => new URLSearchParams(location.search).has("thread"));
    const threadUrl = page.url();
    await page.reload();
    await page.getByTestId("assistant-message").getByText("Hello!").waitFor();
    expect(page.url()).toBe(threadUrl);
    await page.getByTestId("thread-item").first().waitFor();
  });

  it("a token created in settings works with Authorization: Bearer, is shown once, copies, and stops working when revoked", async () => {
    const { page, context } = admin;
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.getByRole("button", { name: "Account" }).click();
    await page.getByTestId("account-email").waitFor();
    expect(await page.getByTestId("account-email").textContent()).toBe(ADMIN.email);
    const form = page.getByRole("form", { name: "Create a token" });
    await form.getByLabel("Name").fill("nightly script");
    await form.getByRole("checkbox", { name: "Scope run" }).check();
    // Only admins are offered the admin scope.
    expect(await form.getByRole("checkbox", { name: "Scope admin" }).count()).toBe(1);
    await form.getByRole("button", { name: "Create token" }).click();
    const secret = (await page.getByTestId("token-secret").textContent()) ?? "";
    expect(secret).toMatch(/^dfp_/);
    await page.getByTestId("token-row").filter({ hasText: "nightly script" }).waitFor();
    expect(await page.getByTestId("token-row").filter({ hasText: "nightly script" }).textContent()).toContain("read, run");
    // The list never carries the secret.
    expect(await page.locator("table[aria-label='Your tokens']").textContent()).not.toContain(secret);

    await page.getByTestId("token-secret-box").getByRole("button", { name: "Copy" }).click();
    await page.getByTestId("token-secret-box").getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.getByRole("main", { name: "Account settings" }).evaluate((el) => el.scrollTo(0, 0));
    await shot(page, "account-settings");

    // A script with the token: no cookies, no CSRF token.
    const bearer = { Authorization: `Bearer ${secret}` };
    const me = await fetch(`${server.url}/api/v1/auth/me`, { headers: bearer });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { email: string }).email).toBe(ADMIN.email);
    const search = await fetch(`${server.url}/api/langgraph/threads/search`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ limit: 10 }) });
    expect(search.status).toBe(200);
    expect(((await search.json()) as unknown[]).length).toBeGreaterThan(0);
    expect((await fetch(`${server.url}/api/v1/auth/me`)).status).toBe(401);

    await page.getByTestId("token-secret-box").getByRole("button", { name: "Done" }).click();
    expect(await page.getByTestId("token-secret").count()).toBe(0);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Revoke nightly script" }).click();
    await page.getByText("No tokens yet.").waitFor();
    expect((await fetch(`${server.url}/api/v1/auth/me`, { headers: bearer })).status).toBe(401);
  });

  it("an admin creates a user on the Users page, promotes and demotes them, and deletes an account", async () => {
    const { page } = admin;
    await page.getByRole("button", { name: "Back to chat" }).click();
    await page.getByRole("button", { name: "Users" }).click();
    await page.locator(`[data-testid=user-row][data-email="${ADMIN.email}"]`).waitFor();
    const form = page.getByRole("form", { name: "Create a user" });
    await form.getByLabel("Email").fill(BOB.email);
    await form.getByLabel("Initial password").fill(BOB.password);
    await form.getByRole("button", { name: "Create user" }).click();
    const bob = page.locator(`[data-testid=user-row][data-email="${BOB.email}"]`);
    await bob.waitFor();
    expect(await bob.getAttribute("data-role")).toBe("user");
    await bob.getByRole("button", { name: "Make admin" }).click();
    await page.locator(`[data-testid=user-row][data-email="${BOB.email}"][data-role=admin]`).waitFor();
    await shot(page, "users");
    await bob.getByRole("button", { name: "Make user" }).click();
    await page.locator(`[data-testid=user-row][data-email="${BOB.email}"][data-role=user]`).waitFor();

    // A throwaway account is deleted again; the admin's own row has no Delete button.
    await form.getByLabel("Email").fill("temp@example.com");
    await form.getByLabel("Initial password").fill("spare-account-pass-3");
    await form.getByRole("button", { name: "Create user" }).click();
    await page.locator(`[data-testid=user-row][data-email="temp@example.com"]`).waitFor();
    expect(await page.getByRole("button", { name: `Delete ${ADMIN.email}` }).count()).toBe(0);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Delete temp@example.com" }).click();
    await page.getByTestId("users-notice").filter({ hasText: "Deleted temp@example.com." }).waitFor();
    // the notice shows when the delete answered; the list re-renders from its reload after that: wait for the row to go
    await page.locator(`[data-testid=user-row][data-email="temp@example.com"]`).waitFor({ state: "detached" });
    expect(await page.locator(`[data-testid=user-row][data-email="temp@example.com"]`).count()).toBe(0);
  });

  it("every write the UI sent after setup carried X-CSRF-Token equal to the csrf_token cookie", async () => {
    const csrf = (await admin.context.cookies()).find((c) => c.name === "csrf_token")?.value;
    expect(csrf).toBeTruthy();
    const afterSetup = writes.slice(writes.findIndex((w) => w.path === "/api/v1/auth/initialize") + 1);
    // The chat run, the token's create and revoke, the user's create and role changes.
    expect(new Set(afterSetup.map((w) => w.method))).toEqual(new Set(["POST", "PATCH", "DELETE"]));
    expect(afterSetup.filter((w) => w.csrf !== csrf)).toEqual([]);
  });

  it("sign-out leads to the login page and ends the session on the server too", async () => {
    const { page, context } = admin;
    await page.getByRole("button", { name: "Back to chat" }).click();
    const old = (await context.cookies()).find((c) => c.name === "access_token")?.value;
    expect(old).toBeTruthy();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${server.url}/login`);
    await page.getByRole("form", { name: "Sign in" }).waitFor();
    // A copy of the old cookie is worthless now.
    expect((await fetch(`${server.url}/api/v1/auth/me`, { headers: { Cookie: `access_token=${old}` } })).status).toBe(401);
    // The workspace is behind the login now.
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/login`);
  });

  it("the login page: SSO buttons, a wrong password says so, and the right one signs in", async () => {
    const { page } = admin;
    const sso = page.getByTestId("sso-button");
    await sso.waitFor();
    expect(await sso.textContent()).toBe("Continue with Corp SSO");
    expect(await sso.getAttribute("href")).toBe("/api/v1/auth/oauth/corp?next=%2F");
    // Self-registration is off on this server: not offered.
    expect(await page.getByRole("button", { name: "No account? Create one" }).count()).toBe(0);
    await page.getByRole("form", { name: "Sign in" }).getByLabel("Email").fill(ADMIN.email);
    await shot(page, "login");
    await page.getByRole("form", { name: "Sign in" }).getByLabel("Password").fill("not-the-password-9");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("auth-error").waitFor();
    expect(await page.getByTestId("auth-error").textContent()).toBe("Incorrect email or password.");
    expect(page.url()).toBe(`${server.url}/login`);
    await signIn(page, ADMIN);
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
  });

  it("repeated failures lock the account out with its own message (429)", async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/login`);
    let text = "";
    for (let i = 0; i < 6 && !text.startsWith("Too many"); i++) {
      await signIn(page, { email: "ghost@example.com", password: `wrong-guess-${i}-xyz` });
      await page.getByTestId("auth-error").waitFor();
      await page.waitForFunction(() => !(document.querySelector("button[type=submit]") as HTMLButtonElement | null)?.disabled);
      text = (await page.getByTestId("auth-error").textContent()) ?? "";
      if (!text.startsWith("Too many")) expect(text).toBe("Incorrect email or password.");
    }
    expect(text).toBe("Too many failed sign-in attempts for this account. Try again in 5 minutes.");
    await context.close();
  });

  it("a user account does not see the admin pages, and next brings it back where it was", async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/#/memory`);
    await page.waitForURL(`${server.url}/login?next=${encodeURIComponent("/#/memory")}`);
    const searched = page.waitForResponse((r) => r.url().endsWith("/api/langgraph/threads/search") && r.request().method() === "POST");
    await signIn(page, BOB);
    await page.waitForURL(`${server.url}/#/memory`);
    // The admin's conversation is not in the user's list.
    expect(((await (await searched).json()) as unknown[]).length).toBe(0);
    await page.getByRole("main", { name: "Memory" }).waitFor();
    await page.getByRole("button", { name: "Back to chat" }).click();
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    const labels = await topBarLabels(page);
    expect(labels).toEqual(expect.arrayContaining(["Memory", "Account", "Sign out", "Agents"]));
    for (const hidden of ["Skills", "MCP", "Users"]) expect(labels).not.toContain(hidden);
    // Typing an admin page's address shows the chat, not the page.
    await page.goto(`${server.url}/#/mcp`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    expect(await page.getByRole("main", { name: "MCP servers" }).count()).toBe(0);
    await page.goto(`${server.url}/#/users`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    expect(await page.getByRole("main", { name: "Users" }).count()).toBe(0);
    expect(await page.getByTestId("thread-item").count()).toBe(0);
    await context.close();
  });

  it("a next that leaves the site is refused: the login lands on this site's start page", async () => {
    const { page, context } = await newPage(browser);
    const foreign: string[] = [];
    await context.route((u) => !u.href.startsWith(server.url), (route) => {
      foreign.push(route.request().url());
      return route.abort();
    });
    await page.goto(`${server.url}/login?next=${encodeURIComponent("//127.0.0.2:9/phish")}`);
    await signIn(page, BOB);
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    // Where the SSO callback lands: its next is held to the same rule.
    await page.goto(`${server.url}/auth/callback?next=${encodeURIComponent("/\\127.0.0.2:9/phish")}`);
    await page.waitForURL(`${server.url}/`);
    // A dot segment the URL parser folds into `//host`.
    await page.goto(`${server.url}/auth/callback?next=${encodeURIComponent("/.//127.0.0.2:9/phish")}`);
    await page.waitForURL(`${server.url}/`);
    await page.goto(`${server.url}/auth/callback?next=${encodeURIComponent("/#/memory")}`);
    await page.waitForURL(`${server.url}/#/memory`);
    await page.getByRole("main", { name: "Memory" }).waitFor();
    expect(foreign).toEqual([]);
    await context.close();
  });

  it("a 401 in the middle of the session sends the user to the login page, keeping where they were", async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/login`);
    await signIn(page, BOB);
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    // The composer shows before the app's start-up reads (threads, models, features) have answered. Ending the
    // session while one is still on its way makes *that* read the 401, which sends the page to the login before
    // the Agents button can be clicked (the timeout this test once hit on a loaded machine): wait for them.
    await page.waitForLoadState("networkidle");
    await page.evaluate(() => history.replaceState(null, "", "/?from=test"));
    // The session ends under the page (as when it expires or another tab signs out).
    await context.clearCookies({ name: "access_token" });
    // Opening the Agents page reads /api/agents: answered 401.
    await page.getByRole("button", { name: "Agents" }).click();
    await page.waitForURL(`${server.url}/login?next=${encodeURIComponent("/?from=test#/agents")}`);
    await signIn(page, BOB);
    await page.waitForURL(`${server.url}/?from=test#/agents`);
    await context.close();
  });

  it("changing the password in settings keeps this session and ends the others", async () => {
    const other = await newPage(browser);
    await other.page.goto(`${server.url}/login`);
    await signIn(other.page, ADMIN);
    await other.page.getByRole("textbox", { name: "Message" }).waitFor();

    const { page } = admin;
    await page.goto(`${server.url}/#/account`);
    const form = page.getByRole("form", { name: "Change password" });
    const changed = `${ADMIN.password}-renewed`;
    await form.getByLabel("Current password").fill("not-the-current-one-1");
    await form.getByLabel("New password", { exact: true }).fill(changed);
    await form.getByLabel("Confirm new password").fill(changed);
    await form.getByRole("button", { name: "Change password" }).click();
    await page.getByRole("alert").filter({ hasText: "Current password is incorrect" }).waitFor();
    await form.getByLabel("Current password").fill(ADMIN.password);
    await form.getByRole("button", { name: "Change password" }).click();
    await page.getByTestId("password-changed").waitFor();

    // This browser got a fresh session; the other one is signed out at its next request.
    await page.reload();
    await page.getByTestId("account-email").waitFor();
    await other.page.reload();
    await other.page.waitForURL(/\/login\?next=|\/login$/);
    await signIn(other.page, { email: ADMIN.email, password: changed });
    await other.page.getByRole("textbox", { name: "Message" }).waitFor();
    await other.context.close();
  });
});

describe.skipIf(!hasChromium)("self-registration (headless Chromium, real gateway with auth on and registration_enabled)", () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-register-dist-"));
  let server: ScriptedGateway;
  let browser: Browser;

  beforeAll(async () => {
    buildWebDist(dist);
    server = await startScriptedGateway(dist, { auth: authEnabledSection({ registration_enabled: true }) });
    // The admin exists already (as after setup), so the login page is where visitors start.
    const init = await fetch(`${server.url}/api/v1/auth/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    expect(init.status).toBe(201);
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, server], dist);
  });

  it("a visitor creates a user account from the login page and lands in the chat without admin pages", async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/`);
    await page.waitForURL(`${server.url}/login`);
    await page.getByRole("button", { name: "No account? Create one" }).click();
    const form = page.getByRole("form", { name: "Create an account" });
    await form.getByLabel("Email").fill(ADMIN.email);
    await form.getByLabel("Password", { exact: true }).fill("fresh-meadow-canvas-5");
    await form.getByLabel("Confirm password").fill("fresh-meadow-canvas-5");
    await form.getByRole("button", { name: "Create account" }).click();
    // The admin's email is taken: the gateway's reason is shown.
    await page.getByTestId("auth-error").waitFor();
    expect(await page.getByTestId("auth-error").textContent()).toMatch(/already/i);
    await form.getByLabel("Email").fill("carol@example.com");
    await form.getByLabel("Password", { exact: true }).fill("fresh-meadow-canvas-5");
    await form.getByLabel("Confirm password").fill("fresh-meadow-canvas-5");
    await form.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(`${server.url}/`);
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    const labels = await topBarLabels(page);
    expect(labels).toEqual(expect.arrayContaining(["Account", "Sign out"]));
    for (const hidden of ["Skills", "MCP", "Users"]) expect(labels).not.toContain(hidden);
    await context.close();
  });
});

describe.skipIf(!hasChromium)("single sign-on from the login page (headless Chromium, real gateway, local OIDC provider double)", () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-sso-dist-"));
  let idp: OidcProvider;
  let server: ScriptedGateway;
  let browser: Browser;

  beforeAll(async () => {
    buildWebDist(dist);
    idp = await startOidcProvider({ users: { dana: { sub: "sub-dana", email: "dana@example.com" } }, defaultUser: "dana" });
    const { clientId, clientSecret } = DEFAULT_OIDC_TEST_CLIENT;
    server = await startScriptedGateway(dist, {
      auth: authEnabledSection({ oidc: { enabled: true, providers: { corp: { display_name: "Corp SSO", issuer: idp.issuer, client_id: clientId, client_secret: clientSecret } } } }),
    });
    const init = await fetch(`${server.url}/api/v1/auth/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ADMIN) });
    expect(init.status).toBe(201);
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, server, idp], dist);
  });

  it("Continue with … goes to the provider and back, signed in, to where the user was", async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/#/memory`);
    await page.waitForURL(`${server.url}/login?next=${encodeURIComponent("/#/memory")}`);
    await page.getByTestId("sso-button").click();
    await page.waitForURL(`${server.url}/#/memory`);
    await page.getByRole("main", { name: "Memory" }).waitFor();
    await page.getByRole("button", { name: "Back to chat" }).click();
    await page.getByRole("button", { name: "Account" }).click();
    await page.getByTestId("account-email").waitFor();
    expect(await page.getByTestId("account-email").textContent()).toBe("dana@example.com");
    // An SSO account has no password here to change.
    expect(await page.getByRole("form", { name: "Change password" }).count()).toBe(0);
    await page.getByText("its password is managed there").waitFor();
    await context.close();
  });
});

describe.skipIf(!hasChromium)("auth-disabled mode (headless Chromium, real gateway)", () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-noauth-dist-"));
  let server: ScriptedGateway;
  let browser: Browser;

  beforeAll(async () => {
    buildWebDist(dist);
    server = await startScriptedGateway(dist);
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, server], dist);
  });

  it("opens the chat with no login, no sign-out and no account pages, and a run works as before", async () => {
    const { page, context } = await newPage(browser);
    await page.goto(`${server.url}/`);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("hello there");
    await box.press("Enter");
    await page.getByTestId("assistant-message").getByText("Hello!").waitFor();
    expect(new URL(page.url()).pathname).toBe("/");
    const labels = await topBarLabels(page);
    expect(labels).toEqual(expect.arrayContaining(["Skills", "MCP", "Memory", "Agents"]));
    for (const hidden of ["Sign out", "Account", "Users"]) expect(labels).not.toContain(hidden);
    // There is nobody to sign in as: the login and setup pages lead straight back to the chat.
    for (const route of ["/login", "/setup"]) {
      await page.goto(`${server.url}${route}`);
      await page.waitForURL(`${server.url}/`);
      await page.getByRole("textbox", { name: "Message" }).waitFor();
    }
    await context.close();
  });
});
