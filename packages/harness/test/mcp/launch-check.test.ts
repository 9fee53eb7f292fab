import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { extensionsConfigSchema } from "../../src/config";
import { checkMcpServers, mcpFailureLine, McpPool } from "../../src/mcp";
import { threadDirs } from "../../src/sandbox";
import { FIXTURES, nodeServer, SANDBOX_RUN_AS } from "./_helpers";

const CRASHING = path.join(FIXTURES, "crashing-server.mjs");
const HANGING = path.join(FIXTURES, "hanging-server.mjs");
const dirs: string[] = [];
const dataDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-check-"));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe("checkMcpServers (doctor's launch check)", { timeout: 60_000 }, () => {
  it("starts every enabled server, lists its tools, reports each failure with a fix, and skips disabled ones", async () => {
    const extensions = extensionsConfigSchema.parse({
      mcpServers: {
        good: nodeServer(CRASHING),
        exits: nodeServer(CRASHING, ["--exit-at-start"]),
        missing: { type: "stdio", command: "definitely-not-a-command-xyz" },
        off: { ...nodeServer(CRASHING, ["--exit-at-start"]), enabled: false },
      },
    });
    // a bound no healthy start comes near, even on a loaded machine
    const checks = await checkMcpServers(extensions, { timeoutMs: 30_000, dataDir: dataDir(), launch: { runAs: SANDBOX_RUN_AS } });
    const by = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(Object.keys(by).sort()).toEqual(["exits", "good", "missing"]);
    expect(by.good).toMatchObject({ ok: true, type: "stdio", error: null });
    expect(by.good.tools.sort()).toEqual(["good_crash", "good_echo"]);

    expect(by.exits).toMatchObject({ ok: false, code: "mcp_start_failed" });
    expect(by.exits.line).toMatch(/^MCP server 'exits' \(stdio\) failed to start: .* — its tools are missing\. Fix: run `.*crashing-server\.mjs --exit-at-start` by hand/);
    expect(by.exits.fix).toContain("mcpServers.exits.enabled: false");

    expect(by.missing).toMatchObject({ ok: false, code: "mcp_start_failed" });
    expect(by.missing.line).toContain("command 'definitely-not-a-command-xyz' was not found on the PATH");
    expect(by.missing.fix).toMatch(/^install definitely-not-a-command-xyz or put its full path in mcpServers\.missing\.command/);

  });

  it("a server that never answers is bounded by the check's timeout, not its default 60 s session_init_timeout", async () => {
    const extensions = extensionsConfigSchema.parse({ mcpServers: { hangs: nodeServer(HANGING) } });
    const [hangs] = await checkMcpServers(extensions, { timeoutMs: 1500, dataDir: dataDir(), launch: { runAs: SANDBOX_RUN_AS } });
    expect(hangs).toMatchObject({ name: "hangs", ok: false, code: "mcp_init_timeout" });
    expect(hangs.error).toContain("did not initialise within 1.5s");
    expect(hangs.fix).toContain("session_init_timeout");
  });

  it("nothing enabled: nothing started, nothing reported", async () => {
    const extensions = extensionsConfigSchema.parse({ mcpServers: { off: { ...nodeServer(CRASHING, ["--exit-at-start"]), enabled: false } } });
    expect(await checkMcpServers(extensions, { timeoutMs: 1000 })).toEqual([]);
  });
});

describe("McpPool.failedServers", { timeout: 60_000 }, () => {
  it("lists the enabled servers that are down after the first load, and never starts a load itself", async () => {
    const dir = dataDir();
    const config = extensionsConfigSchema.parse({ mcpServers: { bad: nodeServer(CRASHING, ["--exit-at-start"]), fine: nodeServer(CRASHING) } });
    const pool = new McpPool({
      extensionsConfig: () => ({ config }),
      threadDirs: (u, t) => threadDirs(dir, t, u),
      launch: { dataDir: dir, runAs: SANDBOX_RUN_AS },
      logger: { warn: () => undefined, info: () => undefined },
      retryInitialMs: 2_147_483_647,
    });
    try {
      expect(pool.failedServers()).toEqual([]);
      await pool.getTools();
      const failed = pool.failedServers();
      expect(failed.map((f) => [f.name, f.type, f.code])).toEqual([["bad", "stdio", "mcp_start_failed"]]);
      expect(failed[0].config.args).toContain("--exit-at-start");
    } finally {
      await pool.close();
    }
  });
});

describe("mcpFailureLine", () => {
  it("remote servers: names the url (credentials masked) and the fix", () => {
    const line = mcpFailureLine({
      name: "docs",
      type: "http",
      error: "MCP server 'docs' failed to start: fetch failed (connect ECONNREFUSED 127.0.0.1:9)",
      code: "mcp_start_failed",
      config: { url: "http://user:s3cret@127.0.0.1:9/mcp", command: null, args: [] },
    });
    expect(line).toMatch(/^MCP server 'docs' \(http\) failed to start: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:9\) — its tools are missing\. Fix: start the server or correct mcpServers\.docs\.url/);
    expect(line).not.toContain("s3cret");
    expect(line.split("\n")).toHaveLength(1);
  });

  it("an invalid entry and a timeout get their own fixes", () => {
    expect(mcpFailureLine({ name: "x", type: "stdio", error: "MCP server 'x' with stdio transport requires 'command'", code: "mcp_config_invalid" })).toContain(
      "Fix: correct mcpServers.x in extensions_config.json",
    );
    expect(mcpFailureLine({ name: "x", type: "sse", error: "MCP server 'x' did not initialise within 5s", code: "mcp_init_timeout" })).toContain("answers MCP on its url, or raise mcpServers.x.session_init_timeout");
  });
});
