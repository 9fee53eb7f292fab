import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseSandboxConfig, probeBwrapDataDir, sandboxRunAs } from "@deerflow-ts/harness/sandbox";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { runDoctor } from "../src/commands/doctor";
import { cleanEnv, runCli, tempDir } from "./helpers";

function writeConfig(dir: string, lines: string[]): void {
  writeFileSync(path.join(dir, "config.yaml"), ["config_version: 34", ...lines, ""].join("\n"));
}

/** A PATH with only `node` on it (no bwrap). */
function pathWithoutBwrap(dir: string): string {
  const bin = path.join(dir, "bin-no-bwrap");
  mkdirSync(bin);
  symlinkSync(process.execPath, path.join(bin, "node"));
  return bin;
}

describe("deerflow doctor", { timeout: 60_000 }, () => {
  it("reports a missing env var with its key path and a fix, and a missing bwrap, with exit code 1", async () => {
    const dir = tempDir();
    writeConfig(dir, ["models:", "  - name: m", "    use: openai", "    model: gpt-x", "    api_key: $DF_DOCTOR_MISSING_KEY", "sandbox:", "  use: bwrap"]);
    const r = await runCli(["doctor"], { cwd: dir, env: cleanEnv({ PATH: pathWithoutBwrap(dir), DF_DOCTOR_MISSING_KEY: undefined }) });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✗ env: $DF_DOCTOR_MISSING_KEY is not set (used by models[0].api_key");
    expect(r.stdout).toContain(`fix: Add DF_DOCTOR_MISSING_KEY=... to ${path.join(dir, ".env")}`);
    expect(r.stdout).toContain("✗ sandbox: bubblewrap (bwrap) not found on PATH, but sandbox.use is 'bwrap'");
    expect(r.stdout).toContain("apt-get install bubblewrap");
    expect(r.stdout).toMatch(/✓ data-dir: .*\.deer-flow is writable/);
  });

  it("passes with a reachable model (scripted server) and reports an unreachable one clearly", async () => {
    const server = await startScriptedLLMServer();
    try {
      const dir = tempDir();
      writeConfig(dir, [
        "models:",
        "  - name: good",
        "    use: openai-compatible",
        "    model: scripted",
        "    api_key: $DF_DOCTOR_KEY",
        `    base_url: ${server.url}/v1`,
        "sandbox:",
        "  use: local",
      ]);
      writeFileSync(path.join(dir, ".env"), "DF_DOCTOR_KEY=abc\n");
      const env = cleanEnv({ PATH: pathWithoutBwrap(dir) });
      const ok = await runCli(["doctor"], { cwd: dir, env });
      expect(ok.stdout).toContain("✓ env: every referenced environment variable is set");
      expect(ok.stdout).toContain("✓ model: good (scripted) answered");
      expect(ok.stdout).toContain("! sandbox: bubblewrap (bwrap) not found on PATH; commands would run without isolation");
      expect(ok.code).toBe(0);
      expect(server.requests.length).toBeGreaterThan(0);

      writeConfig(dir, ["models:", "  - name: offline", "    use: openai-compatible", "    model: x", "    base_url: http://127.0.0.1:9/v1", "sandbox:", "  use: local"]);
      const bad = await runCli(["doctor", "--timeout", "5"], { cwd: dir, env });
      expect(bad.code).toBe(1);
      expect(bad.stdout).toMatch(/✗ model: offline: (cannot reach the model server at http:\/\/127\.0\.0\.1:9\/v1|no answer from the model server)/);
      expect(bad.stdout).toMatch(/fix: Check your network/);
    } finally {
      await server.close();
    }
  });

  it("explains a missing config.yaml", async () => {
    const dir = tempDir();
    const r = await runCli(["doctor", "--config", "nope.yaml", "--skip-model"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ config: Config file not found at .*nope\.yaml/);
    expect(r.stdout).toContain("deerflow init");
  });

  it("warns when the agent would have no file tools (`tools: []`), and lists the default sandbox tools when the key is absent", async () => {
    const dir = tempDir();
    const model = ["models:", "  - name: m", "    use: openai-compatible", "    model: x", "    base_url: http://127.0.0.1:9/v1", "sandbox:", "  use: local"];
    const toolLines = async () => {
      const findings = await runDoctor({ configPath: path.join(dir, "config.yaml"), dataDir: path.join(dir, ".deer-flow"), cwd: dir, skipModel: true, timeoutMs: 1000 });
      return findings.filter((f) => f.check === "tools").map((f) => `${f.level}: ${f.message}${f.fix ? ` | fix: ${f.fix}` : ""}`);
    };
    writeConfig(dir, [...model, "tools: []"]);
    const none = await toolLines();
    expect(none).toHaveLength(1);
    expect(none[0]).toContain('warn: the agent would have no file tools (read_file, write_file, …): every file request fails with "Tool not found"');
    expect(none[0]).toContain("delete the `tools:` key to get them by default");
    writeConfig(dir, model);
    expect(await toolLines()).toEqual([
      "ok: agent tools: ls, read_file, glob, grep, write_file, str_replace (default sandbox tools: no `tools:` key)",
      expect.stringMatching(/^warn: bash is configured but off: sandbox\.use is 'local' \(commands would run on the host without isolation\) and sandbox\.allow_host_bash is false \| fix: /),
    ]);
    writeConfig(dir, [...model, "tools:", "  - name: bad", "    use: nowhere:tool"]);
    const unknown = await toolLines();
    expect(unknown[0]).toMatch(/^error: tools\[0\]\.use: unknown tool 'nowhere:tool'/);
  });

  it("probes bubblewrap with the real data dir (named in the finding), also under a 0700 parent", async () => {
    const dir = tempDir(); // mkdtemp: 0700, closed to the sandbox uid when we run as root
    const dataDir = path.join(dir, ".deer-flow");
    const probe = probeBwrapDataDir({ baseDir: dataDir, runAs: sandboxRunAs(parseSandboxConfig({})) });
    writeConfig(dir, ["models:", "  - name: m", "    use: openai-compatible", "    model: x", "    base_url: http://127.0.0.1:9/v1", "sandbox:", "  use: bwrap"]);
    if (!probe.bwrapPath) {
      console.warn("[doctor test] SKIPPING the bwrap data-dir assertion: bwrap is not installed");
      return;
    }
    const findings = await runDoctor({ configPath: path.join(dir, "config.yaml"), dataDir, cwd: dir, skipModel: true, timeoutMs: 1000 });
    const sandbox = findings.filter((f) => f.check === "sandbox").map((f) => `${f.level}: ${f.message}`);
    if (probe.ok) {
      expect(sandbox[0]).toContain(`ok: bubblewrap at ${probe.bwrapPath} can isolate commands with the data dir ${dataDir}`);
      if (probe.blocker) expect(sandbox[0]).toContain(`cannot enter ${dir}; binds are staged in a private mount namespace`);
    } else {
      expect(sandbox[0]).toContain(`cannot start a sandbox with the data dir ${dataDir}: ${probe.reason}`);
    }
  });
});
