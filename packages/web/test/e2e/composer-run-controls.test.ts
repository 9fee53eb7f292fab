/**
 * End-to-end (headless Chromium, the real gateway and lead agent, scripted model): the composer's
 * thinking box follows the selected model's `supports_thinking` and what a run is sent with, and a tool
 * step the user stopped says so (live, and after a reload).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWebDist, chromiumAvailable, launchPage, teardown } from "./browser";
import { startScriptedGateway, type ScriptedGateway } from "./scripted-gateway";

const hasChromium = chromiumAvailable("composer run controls");

describe.skipIf(!hasChromium)("composer run controls (headless Chromium, real gateway)", () => {
  let tmp: string;
  let server: ScriptedGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-controls-"));
    const dist = path.join(tmp, "dist");
    buildWebDist(dist);
    server = await startScriptedGateway(dist);
    ({ browser, page } = await launchPage());
    page.on("pageerror", (e) => console.error("[page error]", e.message));
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, server], tmp);
  });

  const thinkingBox = () => page.getByRole("checkbox", { name: "Thinking" });
  const modelSelect = () => page.getByRole("combobox", { name: "Model" });

  /** Sends `text` and returns the run request's `context` as the browser posted it. */
  async function sendAndCapture(text: string): Promise<Record<string, unknown>> {
    const posted = page.waitForRequest((r: Request) => r.method() === "POST" && /\/runs\/stream$/.test(new URL(r.url()).pathname));
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill(text);
    await box.press("Enter");
    const body = (await posted).postDataJSON() as { context?: Record<string, unknown> };
    return body.context ?? {};
  }

  it("a model without supports_thinking shows thinking off and disabled, and its runs never ask for thinking", async () => {
    await page.goto(server.url + "/");
    await expect.poll(() => modelSelect().locator("option").count()).toBe(2);
    // `scripted` supports thinking: the box is on and can be changed.
    expect(await modelSelect().inputValue()).toBe("scripted");
    expect(await thinkingBox().isChecked()).toBe(true);
    expect(await thinkingBox().isDisabled()).toBe(false);

    // `scripted-2` does not set supports_thinking (GET /api/models says false).
    const models = (await (await fetch(`${server.url}/api/models`)).json()) as { models: Array<{ name: string; supports_thinking: boolean }> };
    expect(models.models.find((m) => m.name === "scripted-2")?.supports_thinking).toBe(false);
    await modelSelect().selectOption("scripted-2");
    expect(await thinkingBox().isDisabled()).toBe(true);
    expect(await thinkingBox().isChecked()).toBe(false);
    const ctx = await sendAndCapture("hello without thinking");
    expect(ctx).toMatchObject({ model_name: "scripted-2", thinking_enabled: false, mode: "flash" });
    await page.getByRole("button", { name: "Send" }).waitFor();

    // Back on the thinking model, the user's choice (on) comes back and is sent.
    await modelSelect().selectOption("scripted");
    expect(await thinkingBox().isChecked()).toBe(true);
    expect(await thinkingBox().isDisabled()).toBe(false);
    const ctx2 = await sendAndCapture("hello with thinking");
    expect(ctx2).toMatchObject({ model_name: "scripted", thinking_enabled: true, mode: "thinking" });
    await page.getByRole("button", { name: "Send" }).waitFor();
  });

  it("Stop during a tool call marks the step stopped (not 'no result'), also after a reload", async () => {
    await page.goto(server.url + "/");
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    await sendAndCapture("run the longtool now");
    const step = page.locator('[data-testid="tool-step"][data-tool="bash"]').last();
    await expect.poll(() => step.locator(".tool-status").textContent()).toBe("running");
    await page.waitForFunction(() => new URLSearchParams(location.search).has("thread"));
    const threadId = new URL(page.url()).searchParams.get("thread") as string;
    await page.getByRole("button", { name: "Stop" }).click();
    await expect.poll(() => step.locator(".tool-status").textContent()).toBe("stopped");
    await step.locator("summary").click();
    expect(await step.locator(".tool-stopped").textContent()).toBe("The run was stopped before this tool returned a result.");
    expect(await page.locator(".tool-status", { hasText: "no result" }).count()).toBe(0);

    // The run ended interrupted on the server; a reload shows the same stopped step from the stored state.
    await expect
      .poll(async () => ((await (await fetch(`${server.url}/api/threads/${threadId}/runs`)).json()) as Array<{ status: string }>)[0]?.status, { timeout: 15_000 })
      .toBe("interrupted");
    await page.goto(`${server.url}/?thread=${threadId}`);
    const reloaded = page.locator('[data-testid="tool-step"][data-tool="bash"]').last();
    await expect.poll(() => reloaded.locator(".tool-status").textContent()).toBe("stopped");
  });
});
