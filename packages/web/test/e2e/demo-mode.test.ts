/**
 * End-to-end: demo mode (`npm start` without a config.yaml) in real headless Chromium. The gateway runs
 * DeerFlow's real lead agent against the scripted demo model over HTTP (`deerflow scripted-llm --demo`):
 * the UI shows the demo banner with the command that configures a real model, and any message walks
 * through the scripted task — a write_file tool step and a presented artifact.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowRuntime } from "@deerflow-ts/harness";
import { startServer } from "@deerflow-ts/server";
import type { Gateway } from "@deerflow-ts/server";
import { startDemoModel } from "../../../cli/src/demo/demo-config";
import type { DemoModel } from "../../../cli/src/demo/demo-config";
import { buildWebDist, chromiumAvailable, launchPage, teardown } from "./browser";

const hasChromium = chromiumAvailable("demo mode");

describe.skipIf(!hasChromium)("demo mode in the web UI (headless Chromium, real gateway and lead agent, scripted demo model)", () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-demo-e2e-"));
  const dist = path.join(work, "dist");
  let demo: DemoModel;
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    buildWebDist(dist);
    demo = await startDemoModel();
    runtime = await DeerFlowRuntime.open({ config: demo.config, dataDir: path.join(work, "data"), log: () => {} });
    ({ gateway, url } = await startServer({ runtime, webDistDir: dist, port: 0, quiet: true, log: () => {}, demoMode: { configureCommand: demo.configureCommand } }));
    ({ browser, page } = await launchPage(15_000));
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, gateway, runtime, demo], work);
  });

  it("shows the demo banner with the one command, and a message yields a write_file step and an artifact", async () => {
    await page.goto(`${url}/`);
    const banner = page.getByTestId("demo-banner");
    await banner.waitFor();
    expect(await banner.textContent()).toContain("scripted test model, not an LLM");
    expect(await banner.locator("code").textContent()).toBe("npx deerflow init");
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("Tell me about red deer");
    await box.press("Enter");
    const preview = page.getByTestId("artifact-preview");
    await preview.locator("h1", { hasText: "DeerFlow demo report" }).waitFor();
    const write = page.locator('[data-testid="tool-step"][data-tool="write_file"]');
    expect(await write.locator(".tool-status").textContent()).toBe("done");
    expect(await write.locator(".tool-result").textContent()).toBe("OK");
    const answer = page.getByText("Done: I wrote");
    await answer.waitFor();
    expect(await page.locator('[data-testid="assistant-message"]').last().textContent()).toContain("To work with a real model, run npx deerflow init");
    expect(await preview.textContent()).toContain("Tell me about red deer");
  });
});
