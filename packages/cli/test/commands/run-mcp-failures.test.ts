import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { runCli, tempDir } from "../helpers";

const CRASHING = path.resolve(__dirname, "../../../harness/test/fixtures/mcp/crashing-server.mjs");

describe("deerflow run: first-run warnings", { timeout: 60_000 }, () => {
  let server: ScriptedLLMServer;
  beforeAll(async () => {
    server = await startScriptedLLMServer({ script: [] });
  });
  afterAll(async () => server.close());

  it("prints one line per failed enabled server on stderr (name, what failed, a fix) and still answers", async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, "config.yaml"),
      ["config_version: 34", "models:", "  - name: scripted", "    use: openai-compatible", "    model: scripted", "    api_key: k", `    base_url: ${server.url}/v1`, "sandbox:", "  use: local", "memory:", "  enabled: false", ""].join("\n"),
    );
    writeFileSync(
      path.join(dir, "extensions_config.json"),
      JSON.stringify({
        mcpServers: {
          exits: { type: "stdio", command: process.execPath, args: [CRASHING, "--exit-at-start"] },
          missing: { type: "stdio", command: "definitely-not-a-command-xyz" },
          off: { enabled: false, type: "stdio", command: "also-not-a-command-xyz" },
        },
      }),
    );
    server.push("The answer.");
    const r = await runCli(["run", "hello"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("The answer.");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines.find((l) => l.startsWith("MCP server 'exits' (stdio) failed to start"))).toMatch(/its tools are missing\. Fix: run `.*--exit-at-start` by hand/);
    expect(lines.find((l) => l.startsWith("MCP server 'missing' (stdio)"))).toContain(
      "command 'definitely-not-a-command-xyz' was not found on the PATH — its tools are missing. Fix: install definitely-not-a-command-xyz",
    );
    expect(r.stderr).not.toContain("'off'");
  });

  it("warns about unknown config keys (file:line, closest key) on stderr and still answers", async () => {
    const dir = tempDir();
    const file = path.join(dir, "config.yaml");
    writeFileSync(
      file,
      ["config_version: 34", "models:", "  - name: scripted", "    use: openai-compatible", "    model: scripted", "    api_key: k", `    base_url: ${server.url}/v1`, "sandbox:", "  use: local", "memory:", "  enabled: false", "titel:", "  enabled: false", ""].join("\n"),
    );
    server.push("Answered anyway.");
    const r = await runCli(["run", "hello"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Answered anyway.");
    expect(r.stderr.trim()).toBe(`Warning: ${file}:12:1: unknown key titel (did you mean title?); it is ignored.`);
  });
});
