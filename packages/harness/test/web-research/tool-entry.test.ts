import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { assembleConfiguredTools } from "../../src/agents/tool-assembly";
import type { ToolConfigEntry } from "../../src/agents/tool-assembly";
import { ConfigError } from "../../src/errors";
import { parseSandboxConfig } from "../../src/sandbox";
import type { SandboxProvider } from "../../src/sandbox";
import { startProviderDouble } from "../../src/testing/web-doubles";
import type { WebDouble } from "../../src/testing/web-doubles";
import { resolveWebToolEntry, webToolUses } from "../../src/web-research";
import { callTool, framedJson } from "./helpers";

const FIX = path.resolve(__dirname, "../../../../../shared/fixtures/deerflow");
if (!fs.existsSync(FIX)) console.warn(`[web-research] SKIPPING the test of DeerFlow's example config: ${FIX} is absent`);
const sandbox = { provider: {} as SandboxProvider, config: parseSandboxConfig({}) };

function assemble(entries: ToolConfigEntry[], env: Record<string, string> = {}) {
  const warnings: string[] = [];
  const tools = assembleConfiguredTools(entries, { sandbox, bashAllowed: false, warn: (m) => warnings.push(m), web: { env } });
  return { tools, warnings };
}

describe("tools: entries resolve to web tools by `use:`", () => {
  it("maps every implemented DeerFlow class path and our own ids", () => {
    const uses = webToolUses();
    for (const u of [
      "deerflow.community.ddg_search.tools:web_search_tool",
      "deerflow.community.searxng.tools:web_search_tool",
      "deerflow.community.serper.tools:web_search_tool",
      "deerflow.community.brave.tools:web_search_tool",
      "deerflow.community.tavily.tools:web_search_tool",
      "deerflow.community.exa.tools:web_search_tool",
      "deerflow.community.firecrawl.tools:web_search_tool",
      "deerflow.community.jina_ai.tools:web_fetch_tool",
      "deerflow.community.exa.tools:web_fetch_tool",
      "deerflow.community.firecrawl.tools:web_fetch_tool",
      "deerflow.community.browserless.tools:web_fetch_tool",
      "deerflow.community.crawl4ai.tools:web_fetch_tool",
      "deerflow.community.image_search.tools:image_search_tool",
      "deerflow.community.serper.tools:image_search_tool",
      "deerflow.community.brave.tools:image_search_tool",
      "web:fetch",
      "web:search:ddg",
      "web:search:jina",
      "web:image_search:serper",
    ]) {
      expect(uses).toContain(u);
      const def = resolveWebToolEntry({ name: "x", use: u }, 0, { warn: () => {} });
      expect(def?.name, u).toMatch(/^(web_search|web_fetch|image_search)$/);
    }
  });

  it("unimplemented community tools stay skipped with a warning; unknown ids are a ConfigError", () => {
    const { tools, warnings } = assemble([
      { name: "web_search", group: "web", use: "deerflow.community.infoquest.tools:web_search_tool" },
      { name: "web_capture", group: "web", use: "deerflow.community.browserless.tools:web_capture_tool" },
      { name: "browser_navigate", group: "browser", use: "deerflow.community.browser_automation.tools:browser_navigate_tool" },
    ]);
    expect(tools).toEqual([]);
    expect(warnings.filter((w) => w.includes("not available in this version"))).toHaveLength(3);
    expect(() => assemble([{ name: "web_search", use: "web:search:google" }])).toThrow(/tools\[0\]\.use: unknown tool 'web:search:google'.*web:search:ddg/);
  });

  it("validates the entry's keys and names tools[i].<key> in the ConfigError", () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ max_results: 0 }, /^tools\[1\]\.max_results: /],
      [{ max_results: "many" }, /^tools\[1\]\.max_results: /],
      [{ base_url: "ftp://x" }, /^tools\[1\]\.base_url: must be an http\(s\) URL/],
      [{ timeout: -1 }, /^tools\[1\]\.timeout: /],
      [{ allow_private_addresses: "maybe" }, /^tools\[1\]\.allow_private_addresses: /],
      [{ safesearch: "extreme" }, /^tools\[1\]\.safesearch: /],
      [{ api_key: 12345 }, /^tools\[1\]\.api_key: .*\[redacted\]/],
    ];
    for (const [extra, re] of cases) {
      let err: unknown;
      try {
        assemble([{ name: "ls", use: "deerflow.sandbox.tools:ls_tool" }, { name: "web_search", group: "web", use: "deerflow.community.serper.tools:web_search_tool", ...extra }]);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(extra)).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(re);
      expect((err as ConfigError).message).not.toContain("12345");
    }
  });

  it("string values from $VAR substitution are coerced (timeout: '10', allow_private_addresses: 'true')", () => {
    const { tools } = assemble([{ name: "web_fetch", use: "web:fetch", timeout: "10", allow_private_addresses: "true", max_chars: "2000" }]);
    expect(tools.map((t) => t.name)).toEqual(["web_fetch"]);
  });

  it("warns about a renamed entry, an unset $VAR key and an unsupported proxy", () => {
    const { tools, warnings } = assemble([{ name: "search", use: "deerflow.community.tavily.tools:web_search_tool", api_key: "$TAVILY_API_KEY", proxy: "http://proxy:3128" }]);
    expect(tools[0].name).toBe("web_search");
    expect(warnings.join("\n")).toMatch(/configured name 'search' differs.*'web_search'/);
    expect(warnings.join("\n")).toMatch(/tools\[0\]\.api_key: \$TAVILY_API_KEY is not set/);
    expect(warnings.join("\n")).toMatch(/tools\[0\]\.proxy: proxies are not supported/);
  });
});

describe("the SSRF test seams cannot be enabled from config", () => {
  it("resolver / testLoopbackHosts keys in a tools: entry are ignored: loopback stays refused", async () => {
    const { tools } = assemble([{ name: "web_fetch", use: "web:fetch", resolver: "127.0.0.1", testLoopbackHosts: ["127.0.0.1", "localhost"], test_loopback_hosts: ["localhost"] }]);
    for (const url of ["http://127.0.0.1:9/", "http://localhost:9/"]) {
      const out = await callTool(tools[0], { url });
      expect(out.status).toBe("error");
      expect(out.text).toMatch(/^Error: Refusing to fetch/);
    }
  });
});

describe("configured web tools talk to their providers", () => {
  let serper: WebDouble;
  beforeAll(async () => {
    serper = await startProviderDouble("serper", { apiKey: "from-env-key" });
  });
  afterAll(() => serper.close());

  it("an entry without api_key reads the provider's environment variable; base_url and max_results apply", async () => {
    const { tools } = assemble([{ name: "web_search", group: "web", use: "deerflow.community.serper.tools:web_search_tool", base_url: `${serper.url}/`, max_results: 2 }], { SERPER_API_KEY: "from-env-key" });
    const out = await callTool(tools[0], { query: "solar", max_results: 9 });
    expect(framedJson<{ results: unknown[] }>(out.text).results).toHaveLength(2);
    expect(serper.requests.at(-1)!.headers["x-api-key"]).toBe("from-env-key");
    expect(tools[0].metadata).toMatchObject({ group: "web", provider: "serper" });
  });
});

describe.skipIf(!fs.existsSync(FIX))("DeerFlow's example config (read in place)", () => {
  it("every web/image tool entry in config.example.yaml, commented or not, resolves or is a known skip", () => {
    const text = fs.readFileSync(path.join(FIX, "config.example.yaml"), "utf8");
    const section = text.slice(text.indexOf("\ntools:"), text.indexOf("\ntool_search:"));
    // Uncomment the provider blocks so every documented entry is exercised with its documented keys.
    const uncommented = section.replace(/^ {2}# (- name:| {2}[a-z_]+:)/gm, "  $1").replace(/^ {4}# ([a-z_]+:)/gm, "    $1");
    const entries = (parseYaml(uncommented) as { tools: ToolConfigEntry[] }).tools.filter((e) => e.group === "web");
    expect(entries.length).toBeGreaterThanOrEqual(20);
    const warnings: string[] = [];
    const resolved: string[] = [];
    entries.forEach((e, i) => {
      const def = resolveWebToolEntry(e, i, { warn: (m) => warnings.push(m), env: {} });
      if (def) resolved.push(e.use);
    });
    for (const u of ["deerflow.community.ddg_search.tools:web_search_tool", "deerflow.community.searxng.tools:web_search_tool", "deerflow.community.jina_ai.tools:web_fetch_tool", "deerflow.community.image_search.tools:image_search_tool", "deerflow.community.serper.tools:image_search_tool", "deerflow.community.crawl4ai.tools:web_fetch_tool"]) {
      expect(resolved).toContain(u);
    }
    const skipped = entries.map((e) => e.use).filter((u) => !resolved.includes(u));
    for (const u of skipped) expect(u).toMatch(/infoquest|groundroute|fastcrw|web_capture/);
  });
});
