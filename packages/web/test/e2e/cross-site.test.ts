/**
 * End-to-end in headless Chromium: a web page on another origin attacks the
 * gateway, and a document in a thread tries to run script on the gateway's
 * origin. The page is served from 127.0.0.2 (cross-site) and from another
 * port of 127.0.0.1 (same-site); its script does what the attack needs:
 * a multipart upload into a thread, a text/plain POST that would start a
 * run, and a PUT of the MCP config. The agent-written report.xml carries a
 * script that would PUT the MCP config from the gateway's own origin when
 * the user opens it. Nothing of it may land.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { threadPaths } from "@deerflow-ts/harness";
import type { DeerFlowRuntime } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { Gateway } from "@deerflow-ts/server";
import { chromiumAvailable, launchPage, startE2eGateway, teardown } from "./browser";

const hasChromium = chromiumAvailable("cross-site attack chain");
const CONFIG = `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
sandbox:
  use: local
`;
const THREAD = "victim";

/** What an XML document with an XHTML script does when a browser renders it on the gateway's origin. */
const EVIL_SCRIPT = `document.title = 'PWNED';
fetch('/api/mcp/config', { method: 'PUT', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ mcp_servers: { pwn: { type: 'stdio', command: 'npx', args: ['-y', '/tmp/evil-package'] } } }) })
  .finally(() => fetch('/api/threads', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ thread_id: 'script-ran' }) }));`;
const EVIL_XML = `<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Report</title></head><body><p>Quarterly report</p><script>${EVIL_SCRIPT}</script></body></html>\n`;

/** The attacking page: every attempt reports how it ended in `window.attack`. */
function attackPage(gateway: string): string {
  return `<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="f" method="POST" enctype="multipart/form-data" target="sink" action="${gateway}/api/threads/${THREAD}/uploads"><input type="file" name="files" id="file"></form>
<script>
const GW = ${JSON.stringify(gateway)};
const XML = ${JSON.stringify(EVIL_XML).replace(/</g, "\\u003c")};
window.attack = (async () => {
  const out = {};
  const fd = new FormData();
  fd.append('files', new Blob([XML], { type: 'application/xml' }), 'report.xml');
  // a no-cors fetch needs no preflight: only the server can refuse it
  out.upload = await fetch(GW + '/api/threads/${THREAD}/uploads', { method: 'POST', mode: 'no-cors', body: fd }).then((r) => r.type, (e) => 'failed: ' + e.message);
  out.run = await fetch(GW + '/api/threads/${THREAD}/runs', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ assistant_id: 'lead_agent', input: { messages: [{ type: 'human', content: 'pwned' }] } }) }).then((r) => r.type, (e) => 'failed: ' + e.message);
  out.mcp = await fetch(GW + '/api/mcp/config', { method: 'PUT', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mcp_servers: { pwn: { type: 'stdio', command: 'npx', args: ['-y', '/tmp/evil-package'] } } }) }).then((r) => 'status ' + r.status, () => 'blocked');
  // the classic form post (a top-level-style navigation of an iframe), with a file set by script
  const dt = new DataTransfer();
  dt.items.add(new File([XML], 'form-report.xml', { type: 'application/xml' }));
  document.getElementById('file').files = dt.files;
  await new Promise((resolve) => { document.getElementById('sink').onload = resolve; document.getElementById('f').submit(); });
  out.form = 'submitted';
  return out;
})();
</script></body></html>`;
}

/** A server for the attacking page on `host` (another loopback address or port). */
function startAttacker(host: string, gateway: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(attackPage(gateway));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://${host}:${port}/`, close: () => new Promise<void>((r) => server.close(() => r())) });
    });
  });
}

describe.skipIf(!hasChromium)("browser attack chain (headless Chromium, real gateway)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-xsite-"));
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;
  let page: Page;
  const attackers: Array<{ url: string; close(): Promise<void> }> = [];
  const paths = () => threadPaths(path.join(root, "data"), "default", THREAD);
  const listDir = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);
  const mcpServers = async () => Object.keys(((await (await fetch(`${url}/api/mcp/config`)).json()) as { mcp_servers: object }).mcp_servers);
  const threadExists = async (id: string) => (await fetch(`${url}/api/threads/${id}`)).status === 200;

  beforeAll(async () => {
    // no UI build needed: the attack never goes through it (`/` then explains how to build it)
    ({ runtime, gateway, url } = await startE2eGateway({ configYaml: CONFIG, root, dist: path.join(root, "no-dist"), model: new ScriptedModel([]) }));
    expect((await fetch(`${url}/api/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ thread_id: THREAD }) })).status).toBe(200);
    // 127.0.0.2 is another site; another port of 127.0.0.1 is the same site (Sec-Fetch-Site: same-site)
    const crossSite = await startAttacker("127.0.0.2", url).catch((err: NodeJS.ErrnoException) => {
      // (macOS configures only 127.0.0.1 on lo0 unless aliased)
      if (err.code !== "EADDRNOTAVAIL") throw err;
      console.warn("[web e2e] 127.0.0.2 is not a local address here: the cross-site attacker is skipped, the same-site one runs");
      return undefined;
    });
    if (crossSite) attackers.push(crossSite);
    attackers.push(await startAttacker("127.0.0.1", url));
    ({ browser, page } = await launchPage(20_000));
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, ...attackers, gateway, runtime], root);
  });

  it("a page on another origin cannot upload into a thread, start a run or change the MCP config", async () => {
    const mcpBefore = await mcpServers();
    for (const attacker of attackers) {
      await page.goto(attacker.url);
      const out = (await page.evaluate(() => (window as unknown as { attack: Promise<Record<string, string>> }).attack)) as Record<string, string>;
      // the requests were sent and answered (an opaque response), the preflighted PUT never got past the preflight
      expect(out, attacker.url).toEqual({ upload: "opaque", run: "opaque", mcp: "blocked", form: "submitted" });
      // the form post's answer is the gateway's refusal, rendered in the attacker's iframe
      const sink = page.frame({ name: "sink" })!;
      expect(await sink.evaluate(() => document.body.textContent ?? "")).toContain("server.allowed_origins");
    }
    expect(listDir(paths().uploads)).toEqual([]);
    expect(((await (await fetch(`${url}/api/threads/${THREAD}/runs`)).json()) as unknown[]).length).toBe(0);
    expect(await mcpServers()).toEqual(mcpBefore);
  });

  it("an agent-written report.xml opened in the browser downloads instead of running script on the gateway's origin", async () => {
    fs.mkdirSync(paths().outputs, { recursive: true });
    fs.writeFileSync(path.join(paths().outputs, "report.xml"), EVIL_XML);
    const artifact = `${url}/api/threads/${THREAD}/artifacts/mnt/user-data/outputs/report.xml`;
    const download = page.waitForEvent("download");
    // (a rendered document would resolve the navigation; a download aborts it)
    const rendered = await page.goto(artifact).then(
      () => true,
      () => false,
    );
    expect(rendered).toBe(false);
    expect((await download).suggestedFilename()).toBe("report.xml");
    expect(await page.title()).not.toBe("PWNED");
    const head = await fetch(artifact);
    expect(head.headers.get("content-disposition")).toMatch(/^attachment/);
    expect(head.headers.get("content-security-policy")).toBe("sandbox");
    expect(head.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await mcpServers()).not.toContain("pwn");
    expect(await threadExists("script-ran")).toBe(false);
  });

  it("text shown inline is plain text in a sandboxed document: no script, an opaque origin the API refuses", async () => {
    fs.writeFileSync(path.join(paths().outputs, "notes.txt"), `<html><body><script>${EVIL_SCRIPT}</script></body></html>`);
    const res = await page.goto(`${url}/api/threads/${THREAD}/artifacts/mnt/user-data/outputs/notes.txt`);
    expect(res?.headers()["content-type"]).toBe("text/plain; charset=utf-8");
    expect(await page.title()).not.toBe("PWNED");
    expect(await page.evaluate(() => document.body.textContent)).toContain("<script>");
    // CSP sandbox: the document's origin is opaque, so even a script injected into it is no longer the gateway's origin
    expect(await page.evaluate(() => window.origin)).toBe("null");
    const status = await page.evaluate(
      (gw) => fetch(`${gw}/api/threads`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ thread_id: "from-sandbox" }) }).then((r) => r.status, () => 0),
      url,
    );
    expect(status).not.toBe(200);
    expect(await threadExists("from-sandbox")).toBe(false);
    expect(await mcpServers()).not.toContain("pwn");
  });

  it("the gateway's own pages still upload (same-origin requests from real Chromium pass)", async () => {
    await page.goto(`${url}/health`);
    const result = await page.evaluate(async (thread) => {
      const fd = new FormData();
      fd.append("files", new Blob(["hello"]), "hello.txt");
      const r = await fetch(`/api/threads/${thread}/uploads`, { method: "POST", body: fd });
      return { status: r.status, body: (await r.json()) as { files: Array<{ path: string }> } };
    }, THREAD);
    expect(result.status).toBe(200);
    expect(result.body.files[0].path).toBe("/mnt/user-data/uploads/hello.txt");
    expect(listDir(paths().uploads)).toEqual(["hello.txt"]);
  });
});
