/**
 * End-to-end in headless Chromium: a page on another port of 127.0.0.1 (the same site as the
 * gateway, so the SameSite=Lax session cookie goes along into its frames) puts the signed-in
 * admin's Users and account pages in a nearly transparent iframe under its own "click here"
 * button (clickjacking). The gateway's UI refuses to be framed by anyone; opened directly it
 * still works.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebDist, CHROMIUM, chromiumAvailable } from "./browser";
import { authEnabledSection, startScriptedGateway, type ScriptedGateway } from "./scripted-gateway";

const hasChromium = chromiumAvailable("framing");
const ADMIN = { email: "admin@example.com", password: "violet-harbour-kettle-42" };

function framingPage(target: string): string {
  return `<!doctype html><html><body>
<button style="position:absolute;top:200px;left:200px">Claim your prize</button>
<iframe id="f" onload="window.frameLoaded = true" src="${target}" style="opacity:0.01;position:absolute;top:0;left:0;width:1200px;height:700px"></iframe>
</body></html>`;
}

function startFramer(gateway: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const target = `${gateway}${new URL(req.url ?? "/", "http://x").searchParams.get("target") ?? "/"}`;
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(framingPage(target));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => new Promise<void>((r) => server.close(() => r())) });
    });
  });
}

describe.skipIf(!hasChromium)("the UI cannot be framed (headless Chromium, real gateway with auth on)", () => {
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-framing-dist-"));
  let server: ScriptedGateway;
  let framer: { url: string; close(): Promise<void> };
  let browser: Browser;

  beforeAll(async () => {
    buildWebDist(dist);
    server = await startScriptedGateway(dist, { auth: authEnabledSection() });
    framer = await startFramer(server.url);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await framer?.close();
    await server?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it("a same-site page framing the signed-in admin's Users and account pages gets nothing rendered", async () => {
    const context = await browser.newContext();
    try {
      // The first admin, signed in in this browser (the cookies land in the context).
      const init = await context.request.post(`${server.url}/api/v1/auth/initialize`, { data: { email: ADMIN.email, password: ADMIN.password } });
      expect(init.status()).toBe(201);
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      // Opened directly, the Users page is there: the session works.
      await page.goto(`${server.url}/#/users`);
      await page.getByRole("main", { name: "Users" }).waitFor();
      for (const target of ["/#/users", "/#/account", "/login"]) {
        const uiAnswers: Array<Record<string, string>> = [];
        page.on("response", (r) => {
          if (r.request().frame() !== page.mainFrame() && r.url().startsWith(server.url) && r.request().resourceType() === "document") uiAnswers.push(r.headers());
        });
        await page.goto(`${framer.url}?target=${encodeURIComponent(target)}`);
        // The iframe's load event fires whether its document was shown or refused.
        await page.waitForFunction(() => (window as unknown as { frameLoaded?: boolean }).frameLoaded === true);
        const child = page.frames().find((f) => f !== page.mainFrame());
        expect(child, target).toBeDefined();
        // A refused frame is Chromium's error page, never the gateway's document.
        expect(child!.url(), target).not.toContain(server.url);
        expect(uiAnswers.length, target).toBeGreaterThan(0);
        for (const h of uiAnswers) {
          expect(h["x-frame-options"], target).toBe("DENY");
          expect(h["content-security-policy"], target).toContain("frame-ancestors 'none'");
        }
        page.removeAllListeners("response");
      }
    } finally {
      await context.close();
    }
  });
});
