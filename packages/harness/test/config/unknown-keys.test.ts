import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LineCounter, parseDocument } from "yaml";
import { closestKey, findUnknownConfigKeys, loadAppConfig, parseAppConfigText } from "../../src/config";
import { memoryBackendConfigSchema } from "../../src/config/memory-config";
import { sandboxConfigSchema } from "../../src/config/sandbox-config";
import { webToolEntrySchema } from "../../src/config/web-tool-config";
import { FIXTURES, HAS_FIXTURES, memoryLogger, tempDir } from "./helpers";

const unknown = (text: string) => parseAppConfigText(text, { file: "config.yaml", env: {} }).unknownKeys;
/** Only the key check (values that would not validate are fine here). */
const keysOnly = (text: string) => {
  const lineCounter = new LineCounter();
  return findUnknownConfigKeys(parseDocument(text, { lineCounter }), lineCounter, "config.yaml");
};

describe("unknown config keys", () => {
  it("names each misspelt top-level section with file:line:column and the closest known key", () => {
    const text = ["config_version: 34", "memroy:", "  enabled: false", "sandbx:", "  use: local", "modles: []", ""].join("\n");
    const keys = unknown(text);
    expect(keys.map((k) => [k.keyPath, k.line, k.column, k.suggestion])).toEqual([
      ["memroy", 2, 1, "memory"],
      ["sandbx", 4, 1, "sandbox"],
      ["modles", 6, 1, "models"],
    ]);
    expect(keys[0].message).toBe("config.yaml:2:1: unknown key memroy (did you mean memory?); it is ignored.");
    // also among the warnings, first and in document order
    expect(parseAppConfigText(text, { file: "config.yaml", env: {} }).warnings.slice(0, 3)).toEqual(keys.map((k) => k.message));
  });

  it("looks into every level of the known sections", () => {
    const text = [
      "memory:",
      "  enabeld: true",
      "  backend_config:",
      "    max_fact: 10",
      "title:",
      "  max_wrods: 3",
      "database:",
      "  checkpoint_delta:",
      "    snapshot_frequncy: 5",
      "auth:",
      "  oidc:",
      "    providers:",
      "      corp:",
      "        display_name: Corp",
      "        issuer: https://id.example.com",
      "        client_id: abc",
      "        scope: [openid]",
      "summarization:",
      "  trigger:",
      "    - type: tokens",
      "      value: 100",
      "      valeu: 100",
      "",
    ].join("\n");
    expect(unknown(text).map((k) => `${k.line}:${k.column} ${k.keyPath} -> ${k.suggestion}`)).toEqual([
      "2:3 memory.enabeld -> enabled",
      "4:5 memory.backend_config.max_fact -> max_facts",
      "6:3 title.max_wrods -> max_words",
      "9:5 database.checkpoint_delta.snapshot_frequncy -> snapshot_frequency",
      "17:9 auth.oidc.providers.corp.scope -> scopes",
      "22:7 summarization.trigger[0].valeu -> value",
    ]);
  });

  it("a key far from every known one is still reported in a closed section, without a suggestion", () => {
    const [k] = unknown("loop_detection:\n  completely_different: 1\n");
    expect(k).toMatchObject({ keyPath: "loop_detection.completely_different", suggestion: null, line: 2, column: 3 });
    expect(k.message).toBe("config.yaml:2:3: unknown key loop_detection.completely_different; it is ignored.");
  });

  it("tool entries: a near miss of a tool key is reported (max_resluts), a tool's own extra keys are not", () => {
    const text = [
      "tools:",
      "  - name: web_search",
      "    group: web",
      "    use: deerflow.community.ddg_search.tools:web_search_tool",
      "    max_resluts: 5",
      "  - name: mine",
      "    use: my_package.tools:thing",
      "    my_custom_option: 3",
      "    search_time_range: 10",
      "",
    ].join("\n");
    expect(unknown(text).map((k) => [k.keyPath, k.line, k.suggestion])).toEqual([["tools[0].max_resluts", 5, "max_results"]]);
  });

  it("model entries pass provider kwargs through without a word", () => {
    const text = ["models:", "  - name: m", "    use: openai", "    model: gpt-x", "    top_p: 0.9", "    extra_body: {a: 1}", "    reasoning_effort: low", "    max_retries: 2", ""].join("\n");
    expect(unknown(text)).toEqual([]);
  });

  it("free-form values (extensions, channels, a plugin's config, acp_agents) are never looked into", () => {
    const text = [
      "extensions:",
      "  whatever: 1",
      "channels:",
      "  slack: {tokn: x}",
      "acp_agents:",
      "  coder: {comand: x}",
      "plugins:",
      "  - use: my.plugin:P",
      "    config: {anything: 1}",
      "",
    ].join("\n");
    expect(unknown(text)).toEqual([]);
  });

  it("sandbox: every provider's keys are known (the bwrap/docker schema, the remote provisioner), typos are reported", () => {
    const known = Object.keys(sandboxConfigSchema.shape)
      .map((k) => `  ${k}: null`)
      .join("\n");
    expect(keysOnly(`sandbox:\n${known}\n  provisioner_url: http://p:8002\n  health_check_skip_seconds: 1\n`)).toEqual([]);
    expect(unknown("sandbox:\n  use: bwrap\n  alow_host_bash: true\n").map((k) => [k.keyPath, k.suggestion])).toEqual([["sandbox.alow_host_bash", "allow_host_bash"]]);
  });

  it("the keys other subsystems read from a section are known there (memory backend, web tools)", () => {
    const backend = Object.keys(memoryBackendConfigSchema.shape);
    expect(keysOnly(`memory:\n  backend_config:\n${backend.map((k) => `    ${k}: null`).join("\n")}\n`)).toEqual([]);
    // older configs: backend keys directly under memory:
    expect(unknown("memory:\n  debounce_seconds: 5\n  model_name: fast\n")).toEqual([]);
    const web = Object.keys(webToolEntrySchema.shape).filter((k) => !["name", "use", "group"].includes(k));
    expect(keysOnly(`tools:\n  - name: t\n    use: x:y\n${web.map((k) => `    ${k}: null`).join("\n")}\n`)).toEqual([]);
  });

  it("an invalid config's error also lists the unknown keys (a misspelt key often is why a value is missing)", () => {
    expect(() => parseAppConfigText("summarization:\n  trigger:\n    - type: tokens\n      valeu: 100\n", { file: "config.yaml", env: {} })).toThrow(
      /summarization\.trigger[\s\S]*config\.yaml:4:7: unknown key summarization\.trigger\[0\]\.valeu \(did you mean summarization\.trigger\[0\]\.value\?\)/,
    );
  });

  it("aliases and merge keys are followed, not reported", () => {
    const text = ["base: &b", "  enabled: true", "title:", "  <<: *b", "  max_words: 3", ""].join("\n");
    expect(unknown(text).map((k) => k.keyPath)).toEqual(["base"]);
  });

  it("loadAppConfig sends them to the logger with the absolute file path", () => {
    const t = tempDir();
    try {
      const file = t.write("config.yaml", "config_version: 34\nmemroy:\n  enabled: false\n");
      const logger = memoryLogger();
      const loaded = loadAppConfig({ path: file, env: {}, dotenv: false, logger });
      expect(loaded.unknownKeys).toHaveLength(1);
      expect(logger.lines).toContain(`${file}:2:1: unknown key memroy (did you mean memory?); it is ignored.`);
    } finally {
      t.cleanup();
    }
  });

  it("closestKey: transpositions count once, short keys need a close match", () => {
    expect(closestKey("memroy", ["memory", "models"])).toBe("memory");
    expect(closestKey("MEMORY", ["memory"])).toBe("memory");
    expect(closestKey("xyz", ["use", "image"])).toBeNull();
  });
});

describe.skipIf(!HAS_FIXTURES)("DeerFlow's own config.example.yaml", () => {
  const file = path.join(FIXTURES, "config.example.yaml");
  const text = HAS_FIXTURES ? readFileSync(file, "utf8") : "";
  const anyEnv = new Proxy({}, { get: () => "1" }) as Record<string, string>;

  it("has no unknown key", () => {
    expect(parseAppConfigText(text, { file, env: anyEnv }).unknownKeys).toEqual([]);
  });

  it("nor has any of its commented-out sections once uncommented", () => {
    const lines = text.split("\n");
    const blocks: string[][] = [];
    for (let i = 0; i < lines.length; i++) {
      if (!/^# [a-z_]+:\s*$/.test(lines[i])) continue;
      const block = [lines[i].slice(2)];
      while (i + 1 < lines.length && /^# {3}/.test(lines[i + 1])) block.push(lines[++i].slice(2).replace(/\s+#.*$/, ""));
      blocks.push(block);
    }
    expect(blocks.length).toBeGreaterThan(20);
    const found = blocks.flatMap((b) => parseAppConfigText(b.join("\n"), { file: b[0], env: anyEnv }).unknownKeys.map((k) => k.message));
    expect(found).toEqual([]);
  });
});
