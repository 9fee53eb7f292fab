/**
 * With sign-in on, `deerflow run` and `deerflow chat` still act as the local
 * user `default`, whose threads no signed-in account sees. They say so under
 * the thread line; with sign-in off they print no such note.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { cleanEnv, runCli, tempDir } from "./helpers";

const NOTE = "as the local user 'default' (sign-in is on: this thread is no account's, so the web UI does not list it; continue it here with --thread)";

function project(baseUrl: string, auth: boolean): string {
  const dir = tempDir("df-local-user-");
  writeFileSync(
    path.join(dir, "config.yaml"),
    [
      "config_version: 34",
      "models:",
      "  - name: scripted",
      "    use: openai-compatible",
      "    model: scripted",
      "    api_key: not-needed",
      `    base_url: ${baseUrl}`,
      "sandbox:",
      "  use: local",
      // memory off: its updater would take the scripted server's next reply
      "memory:",
      "  enabled: false",
      ...(auth ? ["auth:", "  enabled: true", "  jwt_secret: $DEER_FLOW_JWT_SECRET"] : []),
      "",
    ].join("\n"),
  );
  writeFileSync(path.join(dir, ".env"), `DEER_FLOW_JWT_SECRET=${"k".repeat(48)}\n`, { mode: 0o600 });
  return dir;
}

describe("run and chat with sign-in on name the local user", { timeout: 120_000 }, () => {
  let server: ScriptedLLMServer;
  beforeAll(async () => {
    server = await startScriptedLLMServer({ script: [] });
  });
  afterAll(async () => server.close());

  it("run prints the note under the thread line with sign-in on, and not without", async () => {
    server.push({ text: "Hello from the double." } as never);
    const on = await runCli(["run", "hi"], { cwd: project(`${server.url}/v1`, true), env: cleanEnv() });
    expect(on.code).toBe(0);
    const lines = on.stdout.split("\n");
    expect(lines[0]).toMatch(/^thread [0-9a-f-]{36}$/);
    expect(lines[1]).toBe(NOTE);
    expect(on.stdout).toContain("Hello from the double.");

    server.push({ text: "Hello again." } as never);
    const off = await runCli(["run", "hi"], { cwd: project(`${server.url}/v1`, false), env: cleanEnv() });
    expect(off.code).toBe(0);
    expect(off.stdout).toContain("Hello again.");
    expect(off.stdout).not.toContain("as the local user");
  });

  it("chat prints it under its header", async () => {
    const r = await runCli(["chat"], { cwd: project(`${server.url}/v1`, true), env: cleanEnv(), input: "/exit\n" });
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^DeerFlow chat · thread [0-9a-f-]{36} · \/exit to quit$/);
    expect(lines[1]).toBe(NOTE);
  });
});
