import { copyFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runDoctor, whichOnPath } from "../../src/commands/doctor";
import { cleanEnv, EXAMPLE_CONFIG, HAS_EXAMPLE_CONFIG, runCli, tempDir } from "../helpers";

const CRASHING = path.resolve(__dirname, "../../../harness/test/fixtures/mcp/crashing-server.mjs");
const EXAMPLE_EXTENSIONS = path.join(path.dirname(EXAMPLE_CONFIG), "extensions_config.example.json");
const MODEL = ["models:", "  - name: m", "    use: openai-compatible", "    model: x", "    base_url: http://127.0.0.1:9/v1"];

function write(dir: string, lines: string[]): string {
  const file = path.join(dir, "config.yaml");
  writeFileSync(file, ["config_version: 34", ...lines, ""].join("\n"));
  return file;
}

const doctor = (dir: string) => runDoctor({ configPath: path.join(dir, "config.yaml"), dataDir: path.join(dir, ".deer-flow"), cwd: dir, skipModel: true, timeoutMs: 30_000 });

describe("deerflow doctor: first-run checks", { timeout: 60_000 }, () => {
  it("reports unknown config keys as errors with file:line, the closest key and a fix (exit 1)", async () => {
    const dir = tempDir();
    const file = write(dir, [...MODEL, "sandbox:", "  use: local", "memroy:", "  enabled: false", "title:", "  max_wrods: 3"]);
    const findings = (await doctor(dir)).filter((f) => f.check === "config" && f.level !== "ok");
    expect(findings).toEqual([
      { check: "config", level: "error", message: `${file}:9:1: unknown key memroy (did you mean memory?); it is ignored.`, fix: `Rename memroy to memory at ${file}:9, or remove it.` },
      { check: "config", level: "error", message: `${file}:12:3: unknown key title.max_wrods (did you mean title.max_words?); it is ignored.`, fix: `Rename max_wrods to max_words at ${file}:12, or remove it.` },
    ]);
    const r = await runCli(["doctor", "--skip-model"], { cwd: dir, env: cleanEnv() });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`✗ config: ${file}:9:1: unknown key memroy (did you mean memory?)`);
  });

  it.skipIf(!HAS_EXAMPLE_CONFIG)("DeerFlow's example files: no unknown keys, and nothing about the variables of disabled MCP servers", async () => {
    const dir = tempDir();
    copyFileSync(EXAMPLE_CONFIG, path.join(dir, "config.yaml"));
    copyFileSync(EXAMPLE_EXTENSIONS, path.join(dir, "extensions_config.json"));
    const findings = await doctor(dir);
    const text = findings.map((f) => `${f.level} ${f.check}: ${f.message}`).join("\n");
    expect(text).not.toContain("GITHUB_TOKEN");
    expect(text).not.toContain("OPENVIKING_API_KEY");
    expect(text).not.toContain("unknown key");
    // every example server is disabled: none is started
    expect(findings.filter((f) => f.check === "mcp")).toEqual([]);
  });

  it("bash off with sandbox.use: local names the real reason; 'install bubblewrap' only when it is missing", async () => {
    const dir = tempDir();
    write(dir, [...MODEL, "sandbox:", "  use: local"]);
    const bash = (await doctor(dir)).find((f) => f.check === "tools" && f.message.startsWith("bash is configured but off"));
    expect(bash?.message).toBe("bash is configured but off: sandbox.use is 'local' (commands would run on the host without isolation) and sandbox.allow_host_bash is false");
    const bwrap = whichOnPath("bwrap");
    if (bwrap) {
      expect(bash?.fix).toBe(`bubblewrap is installed (${bwrap}): set sandbox.use: bwrap to give the agent an isolated bash (or allow_host_bash: true to run it on the host).`);
      expect(bash?.fix).not.toMatch(/install bubblewrap/i);
    } else {
      expect(bash?.fix).toMatch(/^Install bubblewrap/);
    }
  });

  it("launch-checks every enabled MCP server (an error per failed one, with its fix); disabled ones are not started", async () => {
    const dir = tempDir();
    write(dir, [...MODEL, "sandbox:", "  use: local"]);
    writeFileSync(
      path.join(dir, "extensions_config.json"),
      JSON.stringify({
        mcpServers: {
          good: { type: "stdio", command: process.execPath, args: [CRASHING] },
          exits: { type: "stdio", command: process.execPath, args: [CRASHING, "--exit-at-start"] },
          off: { enabled: false, type: "stdio", command: "not-a-command-xyz", env: { TOKEN: "$DF_DOCTOR_UNSET_TOKEN" } },
        },
      }),
    );
    const findings = await doctor(dir);
    const mcp = findings.filter((f) => f.check === "mcp");
    expect(mcp.map((f) => [f.level, f.message.split(":")[0]])).toEqual(
      expect.arrayContaining([
        ["ok", "'good' (stdio) started and listed 2 tool(s)"],
        ["error", "MCP server 'exits' (stdio) failed to start"],
      ]),
    );
    expect(mcp).toHaveLength(2);
    expect(mcp.find((f) => f.level === "error")?.fix).toMatch(/^run `.*--exit-at-start` by hand to see why it stops/);
    expect(findings.map((f) => f.message).join("\n")).not.toContain("DF_DOCTOR_UNSET_TOKEN");
  });
});
