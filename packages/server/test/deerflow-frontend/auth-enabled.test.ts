/**
 * DeerFlow's own Next.js frontend, unmodified, against our gateway with sign-in enabled, in headless
 * Chromium: its setup page creates the first admin, the admin chats with the scripted model, signs out,
 * a second person registers on its login page and sees neither the admin's thread in the sidebar nor its
 * messages at its URL, and the admin signs back in to find the thread where it was, then changes the
 * password on the account page and stays signed in.
 *
 * Needs a production build of the frontend (docs/testing.md, "DeerFlow's frontend against our server")
 * named by DEERFLOW_FRONTEND_DIR; CI does not build it, so without it the file is skipped with a notice.
 * DEERFLOW_FRONTEND_SHOTS=<dir> saves screenshots of each page there.
 *
 * The steps share one browser and one server and run in order: each test starts where the previous left.
 */
import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page, type Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frontendBuildProblem, startFrontendStack, type FrontendStack } from "./stack";

const CHROMIUM = "/usr/bin/chromium";
const FRONTEND_DIR = process.env.DEERFLOW_FRONTEND_DIR;
const SHOTS = process.env.DEERFLOW_FRONTEND_SHOTS;
const SKIP = frontendBuildProblem(FRONTEND_DIR) ?? (fs.existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install -y chromium)`);
if (SKIP) console.warn(`[deerflow-frontend] SKIPPED auth-enabled.test.ts: ${SKIP}`);

const JWT_SECRET = "frontend-check-secret-0123456789abcdef0123456789";
const CONFIG = `
config_version: 34
models:
  - name: scripted
    display_name: Scripted model
    use: openai-compatible
    model: scripted
    base_url: \${LLM_URL}
    api_key: test
title:
  enabled: false
memory:
  enabled: false
auth:
  enabled: true
  jwt_secret: "${JWT_SECRET}"
  registration_enabled: true
`;

const ADMIN = { email: "admin@example.com", password: "admin-password-123" };
const NEW_ADMIN_PASSWORD = "changed-admin-password-890";
const BOB = { email: "bob@example.com", password: "bob-password-4567" };
const ADMIN_MESSAGE = "hello from the admin";
const BOB_MESSAGE = "hello from bob";
const STEP_TIMEOUT = 180_000;

let stack: FrontendStack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every `/api/v1/auth/*` answer the browser received, in order ("POST 201 /api/v1/auth/initialize"). */
const authAnswers: string[] = [];
let adminThread = "";
let bobThread = "";
let adminSessionBeforeLogout = "";

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

function recordAuth(r: Response): void {
  const u = new URL(r.url());
  if (u.pathname.startsWith("/api/v1/auth/")) authAnswers.push(`${r.request().method()} ${r.status()} ${u.pathname}`);
}

/** Type a message into the chat box of a new chat and wait until its run's stream has ended and the answer shows. */
async function chat(message: string): Promise<string> {
  await page.goto(`${stack.appUrl}/workspace/chats/new`);
  const input = page.getByPlaceholder(/how can i assist you/i);
  await input.waitFor();
  const streamed = page.waitForResponse((r) => /\/api\/langgraph\/threads\/[^/]+\/runs\/stream$/.test(new URL(r.url()).pathname) && r.request().method() === "POST");
  // after a run the frontend reloads the thread's messages (`messages/page`): the page has settled then
  const reloaded = page.waitForResponse((r) => /\/api\/threads\/[^/]+\/messages\/page$/.test(new URL(r.url()).pathname));
  await input.fill(message);
  await input.press("Enter");
  const stream = await streamed;
  expect(stream.status()).toBe(200);
  // the SSE body is complete when the run has ended
  await stream.finished();
  expect((await reloaded).status()).toBe(200);
  await page.waitForURL(/\/workspace\/chats\/(?!new)[^/?]+$/);
  // the scripted server's echo model answers "You said: …"
  await page.getByText(`You said: ${message}`).first().waitFor();
  return decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
}

/** Sign in on the frontend's login page (reached by opening the workspace without a session). */
async function signIn(who: { email: string; password: string }): Promise<void> {
  await page.goto(`${stack.appUrl}/workspace`);
  await page.waitForURL(/\/login(\?|$)/);
  await page.locator("#email").fill(who.email);
  await page.locator("#password").fill(who.password);
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/auth/login/local");
  await page.getByRole("button", { name: "Sign In", exact: true }).click();
  expect((await answer).status()).toBe(200);
  await page.waitForURL(/\/workspace(\/|$)/);
}

/** Sign out from the account page of the settings dialog; the frontend then goes to its landing page. */
async function signOut(): Promise<void> {
  await page.goto(`${stack.appUrl}/workspace/chats/new?settings=account`);
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/auth/logout");
  await page.getByRole("button", { name: "Sign Out" }).click();
  expect((await answer).status()).toBe(200);
  await page.waitForURL((u) => u.pathname === "/");
}

/** The thread links of the sidebar's recent chats, once `href` of `mustInclude` is among them. */
async function sidebarThreads(mustInclude: string): Promise<string[]> {
  await page.locator(`a[href="/workspace/chats/${mustInclude}"]`).first().waitFor();
  const hrefs = await page.locator('a[href^="/workspace/chats/"]').evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""));
  return hrefs.map((h) => h.slice("/workspace/chats/".length)).filter((id) => id !== "new");
}

/**
 * A response's body, read only when its status is not the expected one (for the failure message). The frontend
 * navigates away right after a successful sign-in request, and the browser then drops the body: reading it
 * would wait forever.
 */
async function bodyIfNot(res: Response, status: number): Promise<string> {
  return res.status() === status ? "" : await res.text();
}

async function cookieNames(): Promise<string[]> {
  return (await context.cookies(stack.appUrl)).map((c) => c.name).sort();
}

describe.skipIf(SKIP)("DeerFlow's frontend against our gateway with sign-in enabled", () => {
  beforeAll(async () => {
    stack = await startFrontendStack({ frontendDir: FRONTEND_DIR!, configYaml: CONFIG });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US" });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
    page.on("response", recordAuth);
  }, STEP_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  }, 60_000);

  it(
    "the setup page creates the first admin, who lands in the workspace and chats with the model",
    async () => {
      // no session, no admin: the frontend's server side asks setup-status and sends the browser to /setup
      await page.goto(`${stack.appUrl}/workspace`);
      await page.waitForURL(/\/setup$/);
      await page.getByRole("button", { name: "Create Admin Account" }).waitFor();
      await shot("01-setup");
      await page.locator("#email").fill(ADMIN.email);
      await page.locator("#password").fill(ADMIN.password);
      await page.locator("#confirmPassword").fill(ADMIN.password);
      const initialized = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/auth/initialize");
      await page.getByRole("button", { name: "Create Admin Account" }).click();
      const init = await initialized;
      expect(init.status(), await bodyIfNot(init, 201)).toBe(201);
      await page.waitForURL(/\/workspace(\/|$)/);
      // the session: HttpOnly access_token, JS-readable csrf_token (the frontend echoes it in X-CSRF-Token)
      const cookies = await context.cookies(stack.appUrl);
      expect(cookies.find((c) => c.name === "access_token")?.httpOnly).toBe(true);
      expect(cookies.find((c) => c.name === "csrf_token")?.httpOnly).toBe(false);
      const me = await page.request.get(`${stack.appUrl}/api/v1/auth/me`);
      expect(await me.json()).toMatchObject({ email: ADMIN.email, system_role: "admin", needs_setup: false });

      // creating the thread and starting the run are cookie-authenticated POSTs: they pass only with the CSRF header
      adminThread = await chat(ADMIN_MESSAGE);
      expect(stack.llm.requests.some((r) => JSON.stringify(r.body).includes(ADMIN_MESSAGE))).toBe(true);
      expect(await sidebarThreads(adminThread)).toContain(adminThread);
      await shot("02-admin-chat");
    },
    STEP_TIMEOUT,
  );

  it(
    "signing out ends the session at once and the workspace sends the browser to the login page",
    async () => {
      adminSessionBeforeLogout = (await context.cookies(stack.appUrl)).find((c) => c.name === "access_token")!.value;
      await signOut();
      expect(await cookieNames()).not.toContain("access_token");
      // the signed-out token is refused by the gateway itself, not just forgotten by the browser
      const replay = await fetch(`${stack.gatewayUrl}/api/v1/auth/me`, { headers: { cookie: `access_token=${adminSessionBeforeLogout}` } });
      expect(replay.status).toBe(401);
      await page.goto(`${stack.appUrl}/workspace`);
      await page.waitForURL(/\/login(\?|$)/);
      await page.getByRole("button", { name: "Sign In", exact: true }).waitFor();
      await shot("03-login");
    },
    STEP_TIMEOUT,
  );

  it(
    "a second person registers on the login page and sees neither the admin's thread nor its messages",
    async () => {
      await page.getByRole("button", { name: "Don't have an account? Sign up" }).click();
      await page.locator("#email").fill(BOB.email);
      await page.locator("#password").fill(BOB.password);
      const registered = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/auth/register");
      await page.getByRole("button", { name: "Create Account" }).click();
      const reg = await registered;
      expect(reg.status(), await bodyIfNot(reg, 201)).toBe(201);
      await page.waitForURL(/\/workspace(\/|$)/);
      const me = await page.request.get(`${stack.appUrl}/api/v1/auth/me`);
      expect(await me.json()).toMatchObject({ email: BOB.email, system_role: "user" });

      bobThread = await chat(BOB_MESSAGE);
      expect(bobThread).not.toBe(adminThread);
      // the list that shows Bob's own thread does not hold the admin's
      expect(await sidebarThreads(bobThread)).not.toContain(adminThread);
      await shot("04-second-user-chat");

      // the admin's thread URL: every read of it is 404 (not 403: its existence is not revealed)
      const messages = page.waitForResponse((r) => new URL(r.url()).pathname === `/api/threads/${adminThread}/messages/page`);
      const state = page.waitForResponse((r) => new URL(r.url()).pathname === `/api/langgraph/threads/${adminThread}`);
      await page.goto(`${stack.appUrl}/workspace/chats/${adminThread}`);
      expect((await messages).status()).toBe(404);
      expect((await state).status()).toBe(404);
      await page.getByText(/not found/i).first().waitFor();
      expect(await page.getByText(ADMIN_MESSAGE).count()).toBe(0);
      expect(await page.getByText(`You said: ${ADMIN_MESSAGE}`).count()).toBe(0);
      await shot("05-second-user-foreign-thread");
    },
    STEP_TIMEOUT,
  );

  it(
    "the admin signs back in on the login page and finds the thread, without the second person's",
    async () => {
      await signOut();
      await signIn(ADMIN);
      const threads = await sidebarThreads(adminThread);
      expect(threads).toContain(adminThread);
      expect(threads).not.toContain(bobThread);
      await page.goto(`${stack.appUrl}/workspace/chats/${adminThread}`);
      await page.getByText(`You said: ${ADMIN_MESSAGE}`).first().waitFor();
      await shot("06-admin-again");
    },
    STEP_TIMEOUT,
  );

  it(
    "the admin changes the password on the account page and stays signed in; the new password signs in",
    async () => {
      await page.goto(`${stack.appUrl}/workspace/chats/new?settings=account`);
      await page.getByPlaceholder("Current password").fill(ADMIN.password);
      await page.getByPlaceholder("New password", { exact: true }).fill(NEW_ADMIN_PASSWORD);
      await page.getByPlaceholder("Confirm new password").fill(NEW_ADMIN_PASSWORD);
      const changed = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/v1/auth/change-password");
      await page.getByRole("button", { name: "Update Password" }).click();
      const answer = await changed;
      expect(answer.status(), await bodyIfNot(answer, 200)).toBe(200);
      await page.getByText("Password changed successfully").waitFor();
      await shot("07-password-changed");
      // the change revoked the old session and the answer carried a new one: the workspace still works
      await page.goto(`${stack.appUrl}/workspace/chats/${adminThread}`);
      await page.getByText(`You said: ${ADMIN_MESSAGE}`).first().waitFor();
      await signOut();
      await signIn({ email: ADMIN.email, password: NEW_ADMIN_PASSWORD });
      expect(await sidebarThreads(adminThread)).toContain(adminThread);
      // the whole conversation with the gateway's auth routes, as the browser saw it
      expect(authAnswers).toEqual(
        expect.arrayContaining([
          "GET 200 /api/v1/auth/setup-status",
          "POST 201 /api/v1/auth/initialize",
          "POST 200 /api/v1/auth/logout",
          "POST 201 /api/v1/auth/register",
          "POST 200 /api/v1/auth/login/local",
          "POST 200 /api/v1/auth/change-password",
        ]),
      );
      expect(authAnswers.filter((a) => !/ 20[01] /.test(a))).toEqual([]);
    },
    STEP_TIMEOUT,
  );
});
