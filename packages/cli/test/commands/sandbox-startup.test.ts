import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cleanEnv, runCli, tempDir } from "../helpers";

const UNSUPPORTED = "deerflow.community.e2b_sandbox:E2BSandboxProvider";

function project(use: string): string {
  const dir = tempDir("df-sbx-use-");
  writeFileSync(
    path.join(dir, "config.yaml"),
    ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", `  use: ${use}`, ""].join("\n"),
  );
  return dir;
}

describe("an unsupported sandbox.use is refused at start-up, not at the first run", () => {
  it("deerflow run exits 1 with the provider named before any thread or run starts", async () => {
    const cwd = project(UNSUPPORTED);
    const r = await runCli(["run", "say hi"], { cwd, env: cleanEnv() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Sandbox provider '${UNSUPPORTED}' is not supported`);
    expect(r.stderr).not.toContain("Run failed");
    expect(r.stdout).not.toMatch(/thread [0-9a-f-]{36}/);
  });

  it("deerflow serve exits 1 with the provider named instead of listening", async () => {
    const cwd = project(UNSUPPORTED);
    const r = await runCli(["serve", "--port", "0"], { cwd, env: cleanEnv() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Sandbox provider '${UNSUPPORTED}' is not supported`);
    expect(r.stdout + r.stderr).not.toMatch(/listening|http:\/\/127\.0\.0\.1:\d+/i);
  });

  it("deerflow doctor reports it as an error (exit 1) instead of \"No problems found\"", async () => {
    const cwd = project(UNSUPPORTED);
    const r = await runCli(["doctor", "--skip-model"], { cwd, env: cleanEnv() });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`✗ sandbox: sandbox.use '${UNSUPPORTED}' is not a supported sandbox provider`);
    expect(r.stdout).not.toContain("No problems found");
  });
});
