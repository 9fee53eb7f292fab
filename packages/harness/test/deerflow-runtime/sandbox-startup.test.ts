import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { SandboxError } from "../../src/errors";

function config(use: string): string {
  return ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", `  use: ${use}`, ""].join("\n");
}

describe("DeerFlowRuntime.open and sandbox.use", () => {
  it("refuses to open with a sandbox provider nobody implements, naming it, and the data dir opens again afterwards", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "df-sbx-start-"));
    const file = path.join(dir, "config.yaml");
    writeFileSync(file, config("deerflow.community.e2b_sandbox:E2BSandboxProvider"));
    const logs: string[] = [];
    const refused = DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, "d"), log: (m) => logs.push(m) });
    await expect(refused).rejects.toBeInstanceOf(SandboxError);
    await expect(refused).rejects.toMatchObject({
      code: "sandbox_provider_unsupported",
      message: expect.stringContaining("'deerflow.community.e2b_sandbox:E2BSandboxProvider'"),
    });
    // what open() had opened before the provider (SQLite stores, run backends) was closed again
    writeFileSync(file, config("local"));
    const rt = await DeerFlowRuntime.open({ configPath: file, cwd: dir, dataDir: path.join(dir, "d"), log: (m) => logs.push(m) });
    expect(rt.sandboxProvider.kind).toBe("local");
    await rt.close();
  });
});
