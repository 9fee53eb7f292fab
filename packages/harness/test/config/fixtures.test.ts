import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_VERSION, loadAppConfig, loadExtensionsConfig, parseExtensionsConfigText } from "../../src/config";
import { FIXTURES, HAS_FIXTURES, memoryLogger } from "./helpers";

const configPath = path.join(FIXTURES, "config.example.yaml");
const extPath = path.join(FIXTURES, "extensions_config.example.json");

describe.skipIf(!HAS_FIXTURES)("DeerFlow's own example files load unchanged", () => {
  it("config.example.yaml loads with DeerFlow's values and no env vars", () => {
    const logger = memoryLogger();
    const loaded = loadAppConfig({ path: configPath, extensionsPath: extPath, env: {}, dotenv: false, logger });
    const c = loaded.config;
    expect(c.config_version).toBe(CONFIG_VERSION);
    expect(c.models).toEqual([]);
    expect(c.tools!.map((t) => t.name)).toContain("bash");
    expect(c.tools!.find((t) => t.name === "web_search")).toMatchObject({ group: "web", max_results: 5 });
    expect(c.tool_groups.map((g) => g.name)).toEqual(["web", "file:read", "file:write", "bash", "browser"]);
    expect(c.sandbox).toMatchObject({ use: "deerflow.sandbox.local:LocalSandboxProvider", allow_host_bash: false, bash_command_timeout: 600 });
    expect(c.summarization).toMatchObject({ enabled: true, trigger: [{ type: "tokens", value: 32000 }], keep: { type: "messages", value: 10 }, trim_tokens_to_summarize: 15564 });
    expect(c.memory.backend_config.max_facts).toBe(100);
    expect(c.loop_detection).toMatchObject({ warn_threshold: 3, hard_limit: 5, window_size: 20 });
    expect(c.token_budget.max_input_tokens).toBeNull();
    expect(c.llm_call).toEqual({ max_concurrent_calls: 0, retry_max_attempts: 3, retry_base_delay_ms: 1000, retry_cap_delay_ms: 8000, burst_retry_base_delay_ms: 5000 });
    expect(c.circuit_breaker).toEqual({ failure_threshold: 5, recovery_timeout_sec: 60 });
    expect(c.database.backend).toBe("sqlite");
    expect((c as Record<string, unknown>).scheduler).toMatchObject({ enabled: false });
    // Unknown sections are kept for extensions.
    expect((c as Record<string, unknown>).mcp_tasks).toMatchObject({ max_result_bytes: 65536 });
    // Extensions merged; unset $VARs in extensions become "" (DeerFlow's rule there), told only for enabled servers:
    // every example server is disabled, so nothing is said about $GITHUB_TOKEN / $OPENVIKING_API_KEY.
    expect(Object.keys(c.extensions.mcpServers)).toEqual(["github", "openviking", "postgres", "long-running-reports"]);
    expect(c.extensions.mcpServers.github.env.GITHUB_TOKEN).toBe("");
    expect(c.extensions.mcpServers.postgres.routing).toMatchObject({ mode: "prefer", priority: 50 });
    expect(loaded.unknownKeys).toEqual([]);
    expect(loaded.warnings).toEqual([]);
    expect(logger.lines).toEqual([]);
  });

  it("an unset $VAR of an enabled server is a warning; of a disabled one it is not", () => {
    const raw = JSON.parse(readFileSync(extPath, "utf8")) as { mcpServers: Record<string, { enabled: boolean }> };
    raw.mcpServers.github.enabled = true;
    const { warnings } = parseExtensionsConfigText(JSON.stringify(raw), { file: "ext.json", env: {} });
    expect(warnings).toEqual(["ext.json: mcpServers.github.env.GITHUB_TOKEN refers to $GITHUB_TOKEN, which is not set; using an empty string."]);
  });

  it("extensions $VARs resolve when set", () => {
    const { config } = loadExtensionsConfig({ path: extPath, env: { GITHUB_TOKEN: "ghp_x", OPENVIKING_API_KEY: "ov" } });
    expect(config.mcpServers.github.env.GITHUB_TOKEN).toBe("ghp_x");
    expect(config.mcpServers.openviking.headers["X-API-Key"]).toBe("ov");
  });

  it("every `use:` in config.example.yaml's model examples resolves to a provider", async () => {
    const { resolveProvider } = await import("../../src/models");
    const text = readFileSync(configPath, "utf8");
    const start = text.indexOf("\nmodels:\n");
    const end = text.indexOf("\ntool_groups:", start);
    const uses = new Set([...text.slice(start, end).matchAll(/^\s*#\s+use:\s*(\S+)/gm)].map((m) => m[1]));
    expect(uses.size).toBeGreaterThan(4);
    for (const use of uses) {
      if (use.includes("openai_codex_provider")) {
        expect(() => resolveProvider(use)).toThrow(/not supported/);
        continue;
      }
      expect(() => resolveProvider(use), use).not.toThrow();
    }
  });
});

describe("our repo-root config.example.yaml", () => {
  const repoExample = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../../../config.example.yaml");

  it("loads with OPENAI_API_KEY set and names the key when it is not", () => {
    const loaded = loadAppConfig({ path: repoExample, env: { OPENAI_API_KEY: "sk-x" }, dotenv: false, logger: memoryLogger() });
    expect(loaded.config.config_version).toBe(CONFIG_VERSION);
    expect(loaded.config.models[0]).toMatchObject({ name: "gpt-4o", api_key: "sk-x", supports_vision: true });
    expect(loaded.warnings).toEqual([]);
    expect(() => loadAppConfig({ path: repoExample, env: {}, dotenv: false })).toThrow(/models\[0\]\.api_key: \$OPENAI_API_KEY is not set/);
  });
});
