/**
 * End-to-end in headless Chromium: the Agents page against the real gateway.
 * With agents_api off it explains how to turn it on; with it on, an agent is
 * created through the form (config.yaml + SOUL.md on disk), edited, opened
 * for a chat and deleted.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeerFlowRuntime } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { Gateway } from "@deerflow-ts/server";
import { buildPageHarness, chromiumAvailable, launchPage, startE2eGateway, teardown } from "./browser";

const hasChromium = chromiumAvailable("Agents UI");
const config = (enabled: boolean) => `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
sandbox:
  use: local
agents_api:
  enabled: ${enabled}
`;

describe.skipIf(!hasChromium)("Agents UI e2e (headless Chromium, real gateway)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-agents-"));
  const dist = path.join(root, "dist");
  const servers: Array<{ runtime: DeerFlowRuntime; gateway: Gateway; url: string }> = [];
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    buildPageHarness(dist);
    for (const enabled of [false, true]) {
      const dir = path.join(root, enabled ? "on" : "off");
      fs.mkdirSync(dir, { recursive: true });
      servers.push(await startE2eGateway({ configYaml: config(enabled), root: dir, dist, model: new ScriptedModel([]) }));
    }
    ({ browser, page } = await launchPage(20_000));
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, ...servers.flatMap((s) => [s.gateway, s.runtime])], root);
  });

  it("explains how to enable the API when agents_api is off", async () => {
    await page.goto(`${servers[0].url}/?page=agents`);
    const hint = page.getByTestId("agents-disabled");
    // One sentence naming the exact key (no pointer at `init`, which asks for a model API key first)…
    expect(await hint.textContent()).toBe("Custom agents are off on this server: set agents_api.enabled: true in config.yaml, then reload this page.");
    // …laid out as one line of text, not one line per text and code run.
    const lineTops = await hint.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return [...new Set([...range.getClientRects()].map((r) => Math.round(r.top)))];
    });
    expect(lineTops).toHaveLength(1);
    expect(await page.getByRole("button", { name: "New agent" }).count()).toBe(0);
  });

  it("creates, edits, opens a chat with and deletes an agent", async () => {
    const { url } = servers[1];
    const agentDir = path.join(root, "on", "data", "users", "default", "agents", "reviewer");
    await page.goto(`${url}/?page=agents`);
    await page.getByText("No custom agents yet.").waitFor();
    await page.getByRole("button", { name: "New agent" }).click();
    const form = page.getByRole("form", { name: "New agent" });
    await form.getByLabel("Name").fill("bad name");
    await form.getByRole("button", { name: "Create" }).click();
    await page.getByRole("alert").filter({ hasText: "letters, digits and '-'" }).waitFor();
    await form.getByLabel("Name").fill("Reviewer");
    await form.getByLabel("Description").fill("Reviews code");
    await form.getByLabel("Model").selectOption("scripted");
    await form.getByLabel(/Tool groups/).fill("file:read, web");
    await form.getByLabel(/Soul/).fill("You review code carefully.");
    await form.getByRole("button", { name: "Create" }).click();
    const card = page.locator('[data-agent="reviewer"]');
    await card.waitFor();
    expect(await card.textContent()).toContain("Reviews code");
    expect(await card.textContent()).toContain("file:read");
    expect(fs.readFileSync(path.join(agentDir, "SOUL.md"), "utf8")).toBe("You review code carefully.");
    expect(fs.readFileSync(path.join(agentDir, "config.yaml"), "utf8")).toContain("model: scripted");

    await card.getByRole("button", { name: "Edit" }).click();
    const edit = page.getByRole("form", { name: "Edit reviewer" });
    expect(await edit.getByLabel(/Soul/).inputValue()).toBe("You review code carefully.");
    await edit.getByLabel("Description").fill("Reviews code, strictly");
    await edit.getByRole("button", { name: "Save" }).click();
    await card.filter({ hasText: "Reviews code, strictly" }).waitFor();
    expect(fs.readFileSync(path.join(agentDir, "config.yaml"), "utf8")).toContain("Reviews code, strictly");

    await card.getByRole("button", { name: "Chat" }).click();
    expect(await page.title()).toBe("chat:reviewer");

    page.once("dialog", (d) => void d.accept());
    await card.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No custom agents yet.").waitFor();
    expect(fs.existsSync(agentDir)).toBe(false);
  });
});
