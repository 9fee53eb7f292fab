import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assembleConfiguredTools } from "@deerflow-ts/harness/agents";
import type { ToolConfigEntry } from "@deerflow-ts/harness/agents";
import { parseAppConfigText } from "@deerflow-ts/harness/config";
import { LocalSandboxProvider, parseSandboxConfig } from "@deerflow-ts/harness/sandbox";
import { probeInitSandbox, sandboxNotice } from "../src/commands/init";
import { runCli, tempDir } from "./helpers";

/** The tools an agent built from this config text would get. */
function toolNames(configText: string, env: Record<string, string>, bashAllowed: boolean): string[] {
  const config = parseAppConfigText(configText, { env }).config;
  const sandboxConfig = parseSandboxConfig(config.sandbox);
  const provider = new LocalSandboxProvider(sandboxConfig, { baseDir: tempDir() });
  return assembleConfiguredTools(config.tools as ToolConfigEntry[], { sandbox: { provider, config: sandboxConfig }, bashAllowed, warn: () => {} }).map((t) => t.name);
}

describe("deerflow init", { timeout: 60_000 }, () => {
  it("writes a valid config.yaml and a .env holding the key (answers from stdin)", async () => {
    const dir = tempDir();
    // provider 2 (anthropic), default model, key, default sandbox (bwrap when it works here, else local)
    const bwrapWorks = probeInitSandbox(path.join(dir, ".deer-flow")).ok;
    const r = await runCli(["init"], { cwd: dir, input: "2\n\nsk-ant-secret-123\n\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const config = readFileSync(path.join(dir, "config.yaml"), "utf8");
    const env = readFileSync(path.join(dir, ".env"), "utf8");
    expect(config).not.toContain("sk-ant-secret-123");
    expect(config).toContain("api_key: $ANTHROPIC_API_KEY");
    expect(env).toBe("ANTHROPIC_API_KEY=sk-ant-secret-123\n");
    const parsed = parseAppConfigText(config, { env: { ANTHROPIC_API_KEY: "sk-ant-secret-123" } }).config;
    expect(parsed.models[0]).toMatchObject({ use: "langchain_anthropic:ChatAnthropic", api_key: "sk-ant-secret-123" });
    expect(parsed.sandbox.use).toBe(bwrapWorks ? "bwrap" : "deerflow.sandbox.local:LocalSandboxProvider");
  });

  it("writes DeerFlow's tool groups and the standard tool set, and the agent built from it has file tools, bash and the web tools", async () => {
    const dir = tempDir();
    const r = await runCli(["init", "--provider", "openai", "--api-key", "sk-1", "--sandbox", "bwrap", "--yes"], { cwd: dir });
    expect(r.code).toBe(0);
    const text = readFileSync(path.join(dir, "config.yaml"), "utf8");
    const parsed = parseAppConfigText(text, { env: { OPENAI_API_KEY: "sk-1" } }).config;
    expect(parsed.tool_groups.map((g) => g.name)).toEqual(["web", "file:read", "file:write", "bash", "browser"]);
    expect(parsed.tools!.map((t) => [t.name, t.group])).toEqual([
      ["web_search", "web"],
      ["web_fetch", "web"],
      ["ls", "file:read"],
      ["read_file", "file:read"],
      ["glob", "file:read"],
      ["grep", "file:read"],
      ["write_file", "file:write"],
      ["str_replace", "file:write"],
      ["bash", "bash"],
    ]);
    // Every entry resolves to a real tool (the web tools included): building the agent's tools must not throw.
    expect(toolNames(text, { OPENAI_API_KEY: "sk-1" }, true)).toEqual(["web_search", "web_fetch", "ls", "read_file", "glob", "grep", "write_file", "str_replace", "bash"]);
  });

  it("--yes picks bwrap when bubblewrap can isolate commands with this data dir, else local with bash off and a notice", async () => {
    const dir = tempDir();
    const probe = probeInitSandbox(path.join(dir, ".deer-flow"));
    const r = await runCli(["init", "--provider", "openai", "--api-key", "sk-1", "--yes"], { cwd: dir });
    expect(r.code).toBe(0);
    const parsed = parseAppConfigText(readFileSync(path.join(dir, "config.yaml"), "utf8"), { env: { OPENAI_API_KEY: "sk-1" } }).config;
    if (probe.ok) {
      expect(parsed.sandbox.use).toBe("bwrap");
      expect(r.stdout).toContain("bubblewrap isolates commands on this machine, so the agent has bash");
    } else {
      console.warn(`[init test] bubblewrap cannot isolate commands here (${probe.reason}); checked the local fallback instead`);
      expect(parsed.sandbox.use).toBe("deerflow.sandbox.local:LocalSandboxProvider");
      expect(r.stdout).toMatch(/To get bash: (install bubblewrap|make bubblewrap work here)/);
    }
  });

  it("--sandbox local writes allow_host_bash: false and says how to get bash; --sandbox bwrap with bwrap installed does not claim it is missing", async () => {
    const dir = tempDir();
    const r = await runCli(["init", "--provider", "openai", "--api-key", "sk-1", "--sandbox", "local", "--yes"], { cwd: dir });
    expect(r.code).toBe(0);
    const text = readFileSync(path.join(dir, "config.yaml"), "utf8");
    expect(parseAppConfigText(text, { env: { OPENAI_API_KEY: "sk-1" } }).config.sandbox.allow_host_bash).toBe(false);
    expect(r.stdout).toMatch(/Sandbox: local .*bash is OFF/);
    expect(r.stdout).toMatch(/To get bash: (install bubblewrap .*, then |make bubblewrap work here .*, then )?set `sandbox.use: bwrap` in config.yaml/);
    const dir2 = tempDir();
    const probe = probeInitSandbox(path.join(dir2, ".deer-flow"));
    const b = await runCli(["init", "--provider", "openai", "--api-key", "sk-1", "--sandbox", "bwrap", "--yes"], { cwd: dir2 });
    expect(b.stdout).not.toContain("needs bubblewrap installed");
    if (probe.ok) expect(b.stdout).toContain("so the agent has bash");
    else expect(b.stdout).toContain(probe.reason as string);
  });

  it("is scriptable with flags, and never overwrites without asking", async () => {
    const dir = tempDir();
    const flags = ["init", "--provider", "openai-compatible", "--base-url", "http://localhost:11434/v1", "--model", "qwen3", "--sandbox", "bwrap", "--yes"];
    const r = await runCli(flags, { cwd: dir });
    expect(r.code).toBe(0);
    const config = readFileSync(path.join(dir, "config.yaml"), "utf8");
    const parsed = parseAppConfigText(config, { env: { OPENAI_COMPATIBLE_API_KEY: "x" } }).config;
    expect(parsed.models[0]).toMatchObject({ model: "qwen3", base_url: "http://localhost:11434/v1", use: "openai-compatible" });
    expect(parsed.sandbox.use).toBe("bwrap");
    writeFileSync(path.join(dir, "config.yaml"), "# mine\n");
    // --yes keeps existing files
    const again = await runCli(flags, { cwd: dir });
    expect(again.stdout).toContain("Kept the existing");
    expect(readFileSync(path.join(dir, "config.yaml"), "utf8")).toBe("# mine\n");
    // interactive "n" keeps it too; "y" replaces it
    const no = await runCli(["init", "--provider", "openai", "--api-key", "sk-1", "--model", "gpt-4.1", "--sandbox", "local", "--agents-api", "off", "--no-auth"], { cwd: dir, input: "n\n" });
    expect(no.stdout).toMatch(/exists\. Overwrite\? \[y\/N\]/);
    expect(readFileSync(path.join(dir, "config.yaml"), "utf8")).toBe("# mine\n");
    const yes = await runCli(["init", "--provider", "openai", "--api-key", "sk-2", "--model", "gpt-4.1", "--sandbox", "local", "--agents-api", "off", "--no-auth"], { cwd: dir, input: "y\ny\n" });
    expect(yes.code).toBe(0);
    expect(yes.stdout).toMatch(/already sets OPENAI_API_KEY\. Replace it\?/);
    expect(readFileSync(path.join(dir, "config.yaml"), "utf8")).toContain("$OPENAI_API_KEY");
    const env = readFileSync(path.join(dir, ".env"), "utf8");
    expect(env).toContain("OPENAI_COMPATIBLE_API_KEY=not-needed");
    expect(env).toContain("OPENAI_API_KEY=sk-2");
  });

  it("the sandbox notice says how to get bash in each case (no bwrap, bwrap that cannot isolate, chosen local)", () => {
    const missing = sandboxNotice("local", { ok: false, reason: "bwrap is not installed (apt-get install bubblewrap)" });
    expect(missing).toContain("bash is OFF");
    expect(missing).toContain("To get bash: install bubblewrap (apt-get install bubblewrap / dnf install bubblewrap), then set `sandbox.use: bwrap`");
    const broken = sandboxNotice("local", { ok: false, bwrapPath: "/usr/bin/bwrap", reason: "bwrap probe failed (exit 1): No permissions to create new namespace" });
    expect(broken).toContain("bubblewrap cannot isolate commands here (bwrap probe failed (exit 1): No permissions to create new namespace)");
    expect(broken).toContain("To get bash: make bubblewrap work here");
    expect(sandboxNotice("local", { ok: true, bwrapPath: "/usr/bin/bwrap" })).toContain("local (you chose local)");
    expect(sandboxNotice("bwrap", { ok: false, bwrapPath: "/usr/bin/bwrap", reason: "x" })).not.toContain("needs bubblewrap installed");
  });

  it("rejects an unknown provider with exit code 2", async () => {
    const r = await runCli(["init", "--provider", "nope", "--yes"], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown provider 'nope'/);
  });
});
