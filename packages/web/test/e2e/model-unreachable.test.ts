/**
 * End-to-end: the configured model server is not running. The real gateway and lead agent call the real
 * OpenAI-compatible provider at a base_url where nothing listens; the UI must say which base_url failed and
 * point at `deerflow doctor`, with one Retry, not "temporarily unavailable" plus a raw ECONNREFUSED.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { startServer } from "@deerflow-ts/server";
import type { Gateway } from "@deerflow-ts/server";
import { buildWebDist, chromiumAvailable, launchPage, teardown } from "./browser";

const hasChromium = chromiumAvailable("model server unreachable");

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe.skipIf(!hasChromium)("a dead model server in the web UI (headless Chromium, real gateway, real provider)", () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-dead-model-e2e-"));
  const dist = path.join(work, "dist");
  let baseUrl: string;
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    buildWebDist(dist);
    baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = appConfigFromText(`
config_version: 34
models:
  - name: local
    use: openai-compatible
    model: local-model
    base_url: ${baseUrl}
    api_key: not-needed
sandbox:
  use: local
title:
  enabled: false
memory:
  enabled: false
`).config;
    runtime = await DeerFlowRuntime.open({ config, dataDir: path.join(work, "data"), log: () => {} });
    ({ gateway, url } = await startServer({ runtime, webDistDir: dist, port: 0, quiet: true, log: () => {} }));
    ({ browser, page } = await launchPage(20_000));
  }, 120_000);

  afterAll(async () => {
    await teardown([browser, gateway, runtime], work);
  });

  it("names the base_url that refused, suggests deerflow doctor, and offers one Retry that reruns the turn", async () => {
    await page.goto(`${url}/`);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("hello");
    await box.press("Enter");
    const answer = page.locator(".answer.error-fallback");
    await answer.waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Send" }).waitFor();
    const text = (await page.locator('[data-testid="assistant-message"]').last().textContent()) ?? "";
    expect(text).toContain(baseUrl);
    expect(text).toContain("deerflow doctor");
    expect(text).not.toMatch(/ECONNREFUSED|temporarily unavailable|wait a moment/i);
    // One way to try again on the whole page, not one per place that knows about the failure.
    const retries = page.getByRole("button", { name: /retry/i });
    await expect.poll(() => retries.count()).toBe(1);
    expect(await page.getByTestId("error-banner").count()).toBe(0);
    // Retry reruns the turn (the server is still down): again one answer that says so, and still one Retry.
    const before = await page.locator('[data-testid="assistant-message"]').count();
    await retries.click();
    await page.getByRole("button", { name: "Stop" }).waitFor();
    await page.getByRole("button", { name: "Send" }).waitFor({ timeout: 30_000 });
    await page.locator(".answer.error-fallback").first().waitFor();
    expect(await page.locator('[data-testid="assistant-message"]').count()).toBe(before);
    expect(await page.locator('[data-testid="human-message"]').count()).toBe(1);
    await expect.poll(() => retries.count()).toBe(1);
  });
});
