/**
 * End-to-end in headless Chromium: a research turn through the real gateway
 * and lead agent with the web tools configured against local doubles
 * (SearXNG wire format, a page server on 127.0.0.1); only the chat model is
 * scripted. The answer's `[citation:Title](URL)` links render as source
 * chips and the turn's sources are listed under it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, createChatModel, DeerFlowRuntime } from "@deerflow-ts/harness";
import type { ModelRequest } from "@deerflow-ts/harness";
import { ScriptedModel, startPageServer, startProviderDouble } from "@deerflow-ts/harness/testing";
import type { WebDouble } from "@deerflow-ts/harness/testing";
import { startServer } from "@deerflow-ts/server";
import type { Gateway } from "@deerflow-ts/server";
import { buildWebDist, chromiumAvailable, launchPage, teardown } from "./browser";

const hasChromium = chromiumAvailable("web research UI");

const ARTICLE = `<!DOCTYPE html><html><head><title>Council approves solar farm</title></head><body><nav><a href="/">Home</a></nav>
<article><h1>Council approves solar farm</h1><p>The council voted 7–2 on Thursday to approve a 40-megawatt solar farm on the old rail yard, after two years of debate about the site.</p>
<p>Cleanup of the contaminated soil comes first and is written into the permit, the environment committee chair said.</p></article></body></html>`;

describe.skipIf(!hasChromium)("web research UI e2e (headless Chromium, real gateway, web tools on local doubles)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-research-"));
  const dist = path.join(root, "dist");
  const requests: ModelRequest[] = [];
  // Servers started in beforeAll: the gateway stack, the browser and the two web doubles.
  let app: { runtime: DeerFlowRuntime; gateway: Gateway; url: string; browser: Browser; page: Page };
  let site: WebDouble;
  let searx: WebDouble;

  beforeAll(async () => {
    site = await startPageServer({ "/solar": { headers: { "content-type": "text/html; charset=utf-8" }, body: ARTICLE }, "/other": { headers: { "content-type": "text/plain" }, body: "Background notes." } });
    const story = `${site.url}/solar`;
    searx = await startProviderDouble("searxng", { results: [{ title: "Council approves solar farm", url: story, snippet: "The council voted 7–2." }] });
    buildWebDist(dist);
    const model = new ScriptedModel(
      [
        (req) => {
          requests.push(req);
          const tools = req.messages.filter((m) => m.type === "tool").length;
          if (req.messages[0]?.type !== "system") return "Solar farm vote";
          if (tools === 0) return { toolCalls: [{ name: "web_search", args: { query: "council solar farm vote" } }] };
          if (tools === 1) return { toolCalls: [{ name: "web_fetch", args: { url: story } }, { name: "web_fetch", args: { url: `${site.url}/other` } }] };
          return `The council approved the farm 7–2 [citation:Council approves solar farm](${story}), with soil cleanup first.`;
        },
      ],
      { onExhausted: "repeat-last", recordRequests: false },
    );
    const config = `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
sandbox:
  use: local
title:
  enabled: false
tools:
  - { name: web_search, group: web, use: deerflow.community.searxng.tools:web_search_tool, base_url: "${searx.url}" }
  - { name: web_fetch, group: web, use: "web:fetch", allow_private_addresses: true, timeout: 5 }
`;
    const runtime = await DeerFlowRuntime.open({
      config: appConfigFromText(config).config,
      cwd: root,
      dataDir: path.join(root, "data"),
      modelFactory: (cfg, name, opts) => ({ ...createChatModel(cfg, name, opts), model }),
      log: () => {},
    });
    const { gateway, url } = await startServer({ runtime, webDistDir: dist, port: 0, quiet: true, log: () => {} });
    app = { runtime, gateway, url, ...(await launchPage()) };
  }, 120_000);

  afterAll(async () => {
    await teardown([app?.browser, app?.gateway, app?.runtime], root);
    await Promise.all([site?.close(), searx?.close()]);
  });

  it("shows the tool steps, a citation chip in the answer and the sources under it", async () => {
    const { page, url } = app;
    await page.goto(`${url}/`);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("What did the council decide about the solar farm?");
    await box.press("Enter");
    const answer = page.locator('[data-testid="assistant-message"]').last();
    const chip = answer.locator("a.citation-chip");
    await chip.waitFor({ timeout: 20_000 });
    expect(await chip.textContent()).toBe("127.0.0.1");
    expect(await chip.getAttribute("title")).toBe("Council approves solar farm");
    expect(await chip.getAttribute("href")).toBe(`${site.url}/solar`);
    expect(await chip.getAttribute("target")).toBe("_blank");
    const sources = answer.getByTestId("sources");
    await sources.waitFor();
    const items = await sources.locator("li").allTextContents();
    expect(items).toHaveLength(2);
    expect(items[0]).toContain("Council approves solar farm");
    expect(items[1]).toContain("read, not cited");
    // The model really went through web_search and web_fetch against the doubles.
    expect(searx.requests.some((r) => r.query.q === "council solar farm vote")).toBe(true);
    expect(site.requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/solar", "/other"]));
    const last = requests.filter((r) => r.messages[0]?.type === "system").at(-1)!;
    const fetched = last.messages.filter((m) => m.type === "tool").map((m) => String(m.content));
    expect(fetched.some((t) => t.includes("# Council approves solar farm") && t.includes("voted 7–2"))).toBe(true);
  });
});
