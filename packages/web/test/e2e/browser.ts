/** Shared set-up of the headless-Chromium end-to-end tests. */
import { execSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { appConfigFromText, createChatModel, DeerFlowRuntime } from "@deerflow-ts/harness";
import type { ChatModel } from "@deerflow-ts/harness";
import { startServer } from "@deerflow-ts/server";
import type { Gateway } from "@deerflow-ts/server";

/** Debian's chromium package. */
export const CHROMIUM = "/usr/bin/chromium";
/** packages/web. */
export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Whether Chromium is installed; warns with the install hint when it is not. */
export function chromiumAvailable(what: string): boolean {
  const ok = fs.existsSync(CHROMIUM);
  if (!ok) console.warn(`[web e2e] SKIPPED ${what}: ${CHROMIUM} not found (apt-get install -y chromium)`);
  return ok;
}

/**
 * Build the UI into its own folder, so test files building in parallel never share an output dir. The
 * build inherits vitest's NODE_ENV=test on purpose: vite.config.ts must still make it React's production
 * build (the size test in chat.test.ts fails otherwise).
 */
export function buildWebDist(outDir: string): void {
  execSync(`npx vite build --outDir ${JSON.stringify(outDir)} --emptyOutDir`, { cwd: WEB_ROOT, stdio: "ignore" });
}

/** Build the test-only page harness (`page-harness/`, renders one page by `?page=`) into `outDir`. */
export function buildPageHarness(outDir: string): void {
  execSync(`npx vite build --config test/e2e/page-harness/vite.config.ts --outDir ${JSON.stringify(outDir)} --emptyOutDir`, { cwd: WEB_ROOT, stdio: "ignore" });
}

/** A headless browser with one 1280×800 page. */
export async function launchPage(timeoutMs = 12_000): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(timeoutMs);
  return { browser, page };
}

/** Close what a test started, in order (browser, then servers), then remove its temp folder. */
export async function teardown(parts: Array<{ close(): Promise<unknown> } | undefined>, tempDir?: string): Promise<void> {
  for (const p of parts) await p?.close();
  if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
}

/**
 * The real gateway over a runtime whose chat model is `model` (model
 * resolution stays real), on 127.0.0.1:0, serving the UI in `dist`.
 * `root` is the project root (skills/, extensions_config.json) and holds the data dir.
 */
export async function startE2eGateway(options: { configYaml: string; root: string; dist: string; model: ChatModel }): Promise<{ runtime: DeerFlowRuntime; gateway: Gateway; url: string }> {
  const runtime = await DeerFlowRuntime.open({
    config: appConfigFromText(options.configYaml).config,
    cwd: options.root,
    dataDir: path.join(options.root, "data"),
    modelFactory: (cfg, name, opts) => ({ ...createChatModel(cfg, name, opts), model: options.model }),
    log: () => {},
  });
  const { gateway, url } = await startServer({ runtime, webDistDir: options.dist, port: 0, quiet: true, log: () => {} });
  return { runtime, gateway, url };
}
