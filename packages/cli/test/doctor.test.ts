import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "../../harness/src/testing/scripted-http";
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
});
