/**
 * End-to-end in headless Chromium: the memory page against the real gateway
 * (memory routes, memory.json on disk). A fact learnt by the updater is shown
 * with the profile; facts are added, edited and deleted; the recall preview
 * shows "remembered: …"; the per-user switch turns memory off.
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

const hasChromium = chromiumAvailable("memory UI");
const CONFIG = `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
sandbox:
  use: local
`;

describe.skipIf(!hasChromium)("memory UI e2e (headless Chromium, real gateway)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-memory-"));
  const dist = path.join(root, "dist");
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    buildPageHarness(dist);
    ({ runtime, gateway, url } = await startE2eGateway({ configYaml: CONFIG, root, dist, model: new ScriptedModel([]) }));
    const memory = runtime.extensions.memory!;
    memory.importMemory({ userId: "default", agentName: null }, {
      user: { workContext: { summary: "Runs a bakery in Lyon." } },
      facts: [
        { id: "fact_00000001", content: "User bakes sourdough every Friday", category: "behavior", confidence: 0.9 },
        { id: "fact_00000002", content: "User prefers metric units", category: "preference", confidence: 0.8 },
      ],
    });
    ({ browser, page } = await launchPage());
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, gateway, runtime], root);
  });

  it("shows the profile and facts; add, edit, delete; recall preview; off switch", async () => {
    await page.goto(`${url}/?page=memory`);
    await page.getByTestId("memory-profile").getByText("Runs a bakery in Lyon.").waitFor();
    expect(await page.getByTestId("memory-fact").count()).toBe(2);

    await page.getByLabel("New fact", { exact: true }).fill("User is allergic to walnuts");
    await page.getByLabel("New fact category").selectOption("context");
    await page.getByRole("button", { name: "Add fact" }).click();
    await page.getByText("User is allergic to walnuts").waitFor();
    expect(await page.getByTestId("memory-fact").count()).toBe(3);

    await page.getByRole("button", { name: "Edit fact User prefers metric units" }).click();
    await page.getByLabel("Fact content").fill("User prefers imperial units");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("User prefers imperial units").waitFor();

    await page.getByRole("button", { name: "Delete fact User bakes sourdough every Friday" }).click();
    await page.getByText("User bakes sourdough every Friday").waitFor({ state: "detached" });
    const stored = JSON.parse(fs.readFileSync(path.join(root, "data", "users", "default", "memory.json"), "utf8")) as { facts: Array<{ content: string }> };
    expect(stored.facts.map((f) => f.content).sort()).toEqual(["User is allergic to walnuts", "User prefers imperial units"]);

    await page.getByLabel("Question").fill("Can I eat walnut bread?");
    await page.getByRole("button", { name: "Preview" }).click();
    expect(await page.getByTestId("remembered").textContent()).toBe("remembered: User is allergic to walnuts");

    // The switch follows the server (it flips once the PUT answered), so click and wait for the page to say so.
    await page.getByLabel("Memory on").click();
    await page.getByText("Off: nothing is remembered or recalled").waitFor();
    expect(await runtime.extensions.memory!.isUserEnabled("default")).toBe(false);
    expect(await runtime.extensions.memory!.provider("default", null, { query: "walnut", threadId: "t", runId: "r" })).toBeNull();
  }, 60_000);
});
