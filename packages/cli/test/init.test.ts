import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAppConfigText } from "../../harness/src/config";
import { runCli, tempDir } from "./helpers";

describe("deerflow init", { timeout: 60_000 }, () => {
  it("writes a valid config.yaml and a .env holding the key (answers from stdin)", async () => {
    const dir = tempDir();
    // provider 2 (anthropic), default model, key, default sandbox
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
    expect(parsed.sandbox.use).toBe("deerflow.sandbox.local:LocalSandboxProvider");
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
    const no = await runCli(["init", "--provider", "openai", "--api-key", "sk-1", "--model", "gpt-4.1", "--sandbox", "local"], { cwd: dir, input: "n\n" });
    expect(no.stdout).toMatch(/exists\. Overwrite\? \[y\/N\]/);
    expect(readFileSync(path.join(dir, "config.yaml"), "utf8")).toBe("# mine\n");
    const yes = await runCli(["init", "--provider", "openai", "--api-key", "sk-2", "--model", "gpt-4.1", "--sandbox", "local"], { cwd: dir, input: "y\ny\n" });
    expect(yes.code).toBe(0);
    expect(yes.stdout).toMatch(/already sets OPENAI_API_KEY\. Replace it\?/);
    expect(readFileSync(path.join(dir, "config.yaml"), "utf8")).toContain("$OPENAI_API_KEY");
    const env = readFileSync(path.join(dir, ".env"), "utf8");
    expect(env).toContain("OPENAI_COMPATIBLE_API_KEY=not-needed");
    expect(env).toContain("OPENAI_API_KEY=sk-2");
  });

  it("rejects an unknown provider with exit code 2", async () => {
    const r = await runCli(["init", "--provider", "nope", "--yes"], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown provider 'nope'/);
  });
});
