/**
 * End-to-end in headless Chromium: the MCP page against the real gateway and
 * MCP pool. A working stdio server shows as connected with its tools, one
 * that fails at start shows its error, a disabled one is off; the toggle
 * disables and re-enables a server through PATCH /api/mcp/config. The page
 * is reached through the app's top bar (`#/mcp`).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeerFlowRuntime } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { Gateway } from "@deerflow-ts/server";
import { buildWebDist, chromiumAvailable, launchPage, startE2eGateway, teardown } from "./browser";

const hasChromium = chromiumAvailable("MCP UI");
const FIXTURE = path.resolve(__dirname, "../../../harness/test/fixtures/mcp/crashing-server.mjs");
const CONFIG = `
models:
  - { name: scripted, use: openai-compatible, model: scripted, base_url: http://127.0.0.1:9/v1, api_key: test }
sandbox:
  use: local
`;

describe.skipIf(!hasChromium)("MCP UI e2e (headless Chromium, real gateway)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-web-mcp-"));
  const dist = path.join(root, "dist");
  const file = path.join(root, "extensions_config.json");
  const allowlist = process.env.DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST;
  let runtime: DeerFlowRuntime;
  let gateway: Gateway;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // `node` (found on PATH) is allowlisted so the page can re-enable the fixture server through the API.
    process.env.DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST = "node";
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          local: { type: "stdio", command: "node", args: [FIXTURE], description: "Echo fixture" },
          broken: { type: "stdio", command: "node", args: [FIXTURE, "--exit-at-start"] },
          remote: { type: "http", url: "http://127.0.0.1:9/mcp", enabled: false },
        },
      }),
    );
    buildWebDist(dist);
    ({ runtime, gateway, url } = await startE2eGateway({ configYaml: CONFIG, root, dist, model: new ScriptedModel([]) }));
    ({ browser, page } = await launchPage(20_000));
  }, 120_000);

  afterAll(async () => {
    if (allowlist === undefined) delete process.env.DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST;
    else process.env.DEER_FLOW_MCP_STDIO_COMMAND_ALLOWLIST = allowlist;
    await teardown([browser, gateway, runtime], root);
  });

  it("lists servers with status, tools and errors; the toggle disables and re-enables a server", async () => {
    // the app's own navigation: the top bar's MCP button opens #/mcp
    await page.goto(url);
    await page.getByRole("button", { name: "MCP", exact: true }).click();
    await page.getByRole("main", { name: "MCP servers" }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/mcp");
    const card = (name: string) => page.locator(`[data-testid="mcp-server"][data-server="${name}"]`);
    await card("local").and(page.locator('[data-state="connected"]')).waitFor();
    expect(await card("local").getByLabel("Tools of local").textContent()).toBe("local_echolocal_crash");
    expect(await card("local").textContent()).toContain("Echo fixture");
    await card("broken").and(page.locator('[data-state="failed"]')).waitFor();
    expect(await card("broken").getByTestId("mcp-error").textContent()).toMatch(/Last error: MCP server 'broken' failed to start/);
    expect(await card("remote").getAttribute("data-state")).toBe("disabled");
    expect(await card("remote").getByTestId("mcp-state").textContent()).toBe("Disabled");

    await page.getByLabel("Enable local").uncheck();
    await card("local").and(page.locator('[data-state="disabled"]')).waitFor();
    expect(await card("local").getByLabel("Tools of local").count()).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, "utf8")).mcpServers.local.enabled).toBe(false);
    expect(await runtime.extensions.mcp!.getTools()).toEqual([]);

    await page.getByLabel("Enable local").check();
    await card("local").and(page.locator('[data-state="connected"]')).waitFor();
    expect((await runtime.extensions.mcp!.getTools()).map((t) => t.name).sort()).toEqual(["local_crash", "local_echo"]);
  });
});
