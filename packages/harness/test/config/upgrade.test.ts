import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { appConfigFromText, upgradeConfig } from "../../src/config";
import { FIXTURES, HAS_FIXTURES } from "./helpers";

describe("upgradeConfig", () => {
  it("adds missing sections and keys, keeps the user's values and comments, bumps the version", () => {
    const user = "# my settings\nconfig_version: 30 # old\ntitle:\n  enabled: false # no titles please\nmodels:\n  - name: mine\n    use: openai\n    model: gpt-4o\n";
    const example = "config_version: 34\ntitle:\n  enabled: true\n  max_words: 6 # words in a title\n# Loop detection\nloop_detection:\n  enabled: true\nmodels:\n  - name: example\n    use: anthropic\n    model: c\n";
    const r = upgradeConfig(user, example);
    expect(r.fromVersion).toBe(30);
    expect(r.toVersion).toBe(34);
    expect(r.added).toEqual(["title.max_words", "loop_detection"]);
    expect(r.text).toContain("# my settings");
    expect(r.text).toContain("enabled: false # no titles please");
    expect(r.text).toContain("max_words: 6 # words in a title");
    expect(r.text).toContain("# Loop detection");
    expect(r.text).toMatch(/config_version: 34/);
    expect(r.text).not.toContain("name: example");
    const { config, warnings } = appConfigFromText(r.text);
    expect(config.title.enabled).toBe(false);
    expect(config.models.map((m) => m.name)).toEqual(["mine"]);
    expect(warnings).toEqual([]);
  });

  it.skipIf(!HAS_FIXTURES)("upgrading a tiny config with DeerFlow's example yields a complete, loadable file", () => {
    const example = readFileSync(path.join(FIXTURES, "config.example.yaml"), "utf8");
    const r = upgradeConfig("config_version: 1\nsandbox:\n  allow_host_bash: true # I know\n", example);
    expect(r.added).toContain("tool_output");
    expect(r.added).toContain("sandbox.bash_output_max_chars");
    expect(r.text).toContain("allow_host_bash: true # I know");
    const { config } = appConfigFromText(r.text);
    expect(config.config_version).toBe(34);
    expect(config.sandbox.allow_host_bash).toBe(true);
    expect(config.tool_output.externalize_min_chars).toBe(12000);
  });

  it("is idempotent", () => {
    const example = "config_version: 34\ntitle:\n  enabled: true\n";
    const once = upgradeConfig("title: {}\n", example).text;
    const twice = upgradeConfig(once, example);
    expect(twice.added).toEqual([]);
    expect(twice.text).toBe(once);
  });
});
