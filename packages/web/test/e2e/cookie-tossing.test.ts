/**
 * End-to-end in headless Chromium: cookies are not kept apart by port, so a page on another port of
 * 127.0.0.1 can write cookies the gateway receives. It plants the attacker's own session as a second
 * `access_token` (with a longer path, which browsers send first) next to the signed-in victim's. The
 * victim's browser must not quietly become the attacker's account, where everything they type next
 * would land for the attacker to read.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, chromiumAvailable } from "./browser";
import { authEnabledSection, startScriptedGateway, type ScriptedGateway } from "./scripted-gateway";

const hasChromium = chromiumAvailable("cookie tossing");
const PASSWORD = "violet-harbour-kettle-42";

describe.skipIf(!hasChromium)("a session cookie planted from another port (headless Chromium, real gateway with auth on)", () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-tossing-dist-"));
  let server: ScriptedGateway;
  let browser: Browser;
  let tosser: http.Server | undefined;

  beforeAll(async () => {
    // The API is what is attacked here: a one-line page stands in for the built UI.
    fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>DeerFlow</title>");
    server = await startScriptedGateway(dist, { auth: authEnabledSection() });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (tosser ? tosser.close(() => r()) : r()));
    await server?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it("the victim's requests are never answered as the attacker's account", async () => {
    // The attacker: the first admin here, with a session of their own.
    const attacker = await browser.newContext();
    expect((await attacker.request.post(`${server.url}/api/v1/auth/initialize`, { data: { email: "attacker@example.com", password: PASSWORD } })).status()).toBe(201);
    const attackerJwt = (await attacker.cookies()).find((c) => c.name === "access_token")!.value;
    const victimAccount = await attacker.request.post(`${server.url}/api/v1/auth/users`, {
      data: { email: "victim@example.com", password: PASSWORD, system_role: "user" },
      headers: { "X-CSRF-Token": (await attacker.cookies()).find((c) => c.name === "csrf_token")!.value, Origin: server.url },
    });
    expect(victimAccount.status()).toBe(201);
    await attacker.close();

    tosser = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><script>document.cookie = "access_token=${attackerJwt}; path=/api"; document.title = "planted";</script>`);
    });
    await new Promise<void>((r) => tosser!.listen(0, "127.0.0.1", () => r()));
    const tosserUrl = `http://127.0.0.1:${(tosser.address() as AddressInfo).port}/`;

    const victim = await browser.newContext();
    try {
      const login = await victim.request.post(`${server.url}/api/v1/auth/login/local`, { form: { username: "victim@example.com", password: PASSWORD } });
      expect(login.status()).toBe(200);
      const page = await victim.newPage();
      const me = async () => {
        const res = await page.goto(`${server.url}/api/v1/auth/me`);
        return { status: res!.status(), email: res!.status() === 200 ? ((await res!.json()) as { email: string }).email : undefined };
      };
      expect(await me()).toEqual({ status: 200, email: "victim@example.com" });
      await page.goto(tosserUrl);
      await page.waitForFunction(() => document.title === "planted");
      // Both cookies now go to the gateway (the planted one first).
      expect((await victim.cookies(`${server.url}/api/v1/auth/me`)).filter((c) => c.name === "access_token")).toHaveLength(2);
      const after = await me();
      expect(after.email).not.toBe("attacker@example.com");
      expect(after.status).toBe(401);
    } finally {
      await victim.close();
    }
  });
});
