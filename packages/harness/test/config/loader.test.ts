import path from "node:path";
import { utimesSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { ConfigManager, appConfigFromText, loadAppConfig, resolveConfigPath, resolveExtensionsConfigPath } from "../../src/config";
import { memoryLogger, tempDir } from "./helpers";

const MINIMAL = "config_version: 34\n";
let t = tempDir();
afterEach(() => {
  t.cleanup();
  t = tempDir();
});

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("config.yaml lookup order", () => {
  it("explicit path first, and it must exist", () => {
    const p = t.write("custom/my.yaml", MINIMAL);
    t.write("config.yaml", MINIMAL);
    expect(resolveConfigPath({ path: p, cwd: t.dir, env: { DEER_FLOW_CONFIG_PATH: t.write("env.yaml", MINIMAL) } })).toBe(p);
    const e = errorOf(() => resolveConfigPath({ path: "nope.yaml", cwd: t.dir, env: {} }));
    expect(e.code).toBe("config_not_found");
    expect(e.message).toContain(path.join(t.dir, "nope.yaml"));
  });

  it("then DEER_FLOW_CONFIG_PATH, where a missing file is an error (no silent fallback)", () => {
    const envPath = t.write("env.yaml", MINIMAL);
    t.write("config.yaml", MINIMAL);
    expect(resolveConfigPath({ cwd: t.dir, env: { DEER_FLOW_CONFIG_PATH: envPath } })).toBe(envPath);
    const e = errorOf(() => resolveConfigPath({ cwd: t.dir, env: { DEER_FLOW_CONFIG_PATH: path.join(t.dir, "gone.yaml") } }));
    expect(e.message).toContain("DEER_FLOW_CONFIG_PATH");
  });

  it("then ./config.yaml, then the parent directory's config.yaml", () => {
    const parent = t.write("config.yaml", MINIMAL);
    const child = path.join(t.dir, "sub");
    t.write("sub/.keep", "");
    expect(resolveConfigPath({ cwd: child, env: {} })).toBe(parent);
    const own = t.write("sub/config.yaml", MINIMAL);
    expect(resolveConfigPath({ cwd: child, env: {} })).toBe(own);
  });

  it("lists the searched places when nothing is found", () => {
    t.write("a/b/.keep", "");
    const e = errorOf(() => resolveConfigPath({ cwd: path.join(t.dir, "a/b"), env: {} }));
    expect(e.message).toContain(path.join(t.dir, "a/b/config.yaml"));
    expect(e.message).toContain(path.join(t.dir, "a/config.yaml"));
    expect(e.message).toContain("config.example.yaml");
  });

  it("extensions_config.json: env var (must exist) → next to config.yaml → cwd → parent; none is fine", () => {
    const cfgDir = path.join(t.dir, "conf");
    t.write("conf/config.yaml", MINIMAL);
    const cwd = path.join(t.dir, "work");
    t.write("work/.keep", "");
    expect(resolveExtensionsConfigPath({ cwd, env: {}, configDir: cfgDir })).toBeNull();
    const parent = t.write("extensions_config.json", "{}");
    expect(resolveExtensionsConfigPath({ cwd, env: {}, configDir: cfgDir })).toBe(parent);
    const inCwd = t.write("work/extensions_config.json", "{}");
    expect(resolveExtensionsConfigPath({ cwd, env: {}, configDir: cfgDir })).toBe(inCwd);
    const next = t.write("conf/extensions_config.json", "{}");
    expect(resolveExtensionsConfigPath({ cwd, env: {}, configDir: cfgDir })).toBe(next);
    const viaEnv = t.write("x/ext.json", "{}");
    expect(resolveExtensionsConfigPath({ cwd, env: { DEER_FLOW_EXTENSIONS_CONFIG_PATH: viaEnv }, configDir: cfgDir })).toBe(viaEnv);
    expect(() => resolveExtensionsConfigPath({ cwd, env: { DEER_FLOW_EXTENSIONS_CONFIG_PATH: path.join(t.dir, "none.json") } })).toThrow(/DEER_FLOW_EXTENSIONS_CONFIG_PATH/);
  });
});

describe(".env and $VAR resolution", () => {
  const modelYaml = "config_version: 34\nmodels:\n  - name: m\n    use: openai\n    model: gpt-4o\n    api_key: $OPENAI_API_KEY\n";

  it("loads .env next to config.yaml and in cwd, never overriding set variables", () => {
    t.write("conf/config.yaml", modelYaml + "title:\n  model_name: $TITLE_MODEL\n");
    t.write("conf/.env", "OPENAI_API_KEY=from-config-dir\nTITLE_MODEL=from-config-dir\n");
    t.write("work/.env", "TITLE_MODEL=from-cwd\n");
    const env: Record<string, string | undefined> = { OPENAI_API_KEY: "from-shell" };
    const loaded = loadAppConfig({ path: path.join(t.dir, "conf/config.yaml"), cwd: path.join(t.dir, "work"), env, logger: memoryLogger() });
    expect(loaded.config.models[0].api_key).toBe("from-shell");
    expect(loaded.config.title.model_name).toBe("from-cwd");
    expect(loaded.envFiles).toEqual([path.join(t.dir, "work/.env"), path.join(t.dir, "conf/.env")]);
  });

  it("a missing variable is an error naming the key path, the file and the variable", () => {
    const file = t.write("config.yaml", modelYaml + "channels:\n  slack:\n    bot_token: ${SLACK_TOKEN}\n");
    const e = errorOf(() => loadAppConfig({ cwd: t.dir, env: {}, dotenv: false, logger: memoryLogger() }));
    expect(e.code).toBe("config_env_missing");
    expect(e.message).toContain(file);
    expect(e.message).toContain("models[0].api_key: $OPENAI_API_KEY is not set");
    expect(e.message).toContain("channels.slack.bot_token: $SLACK_TOKEN is not set");
    expect(e.message).toContain(".env");
  });

  it("only whole values starting with $ are variables", () => {
    const { config } = appConfigFromText("title:\n  prompt_template: 'costs $5 and $HOME'\n  model_name: $M\n", { env: { M: "fast" } });
    expect(config.title.prompt_template).toBe("costs $5 and $HOME");
    expect(config.title.model_name).toBe("fast");
  });

  it("numbers and booleans from variables are coerced", () => {
    const { config } = appConfigFromText("sandbox:\n  bash_command_timeout: $T\n  allow_host_bash: $B\n", { env: { T: "30", B: "true" } });
    expect(config.sandbox.bash_command_timeout).toBe(30);
    expect(config.sandbox.allow_host_bash).toBe(true);
  });
});

describe("validation", () => {
  it("YAML syntax errors name file, line and column", () => {
    const file = t.write("config.yaml", "models:\n  - name: a\n    use: [openai\n");
    const e = errorOf(() => loadAppConfig({ cwd: t.dir, env: {}, dotenv: false }));
    expect(e.code).toBe("config_syntax");
    expect(e.message).toMatch(new RegExp(`YAML syntax error in ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+:\\d+`));
    expect(e.details.line).toBeGreaterThan(0);
  });

  it("duplicate keys are syntax errors", () => {
    expect(() => appConfigFromText("title:\n  enabled: true\ntitle:\n  enabled: false\n")).toThrow(/:3:1: Map keys must be unique/);
  });

  it("wrong types name file, key path, expected type and the received value", () => {
    const file = t.write(
      "config.yaml",
      "models:\n  - name: a\n    use: openai\n    model: x\n    supports_vision: maybe\n    max_tokens: lots\nsandbox:\n  allow_host_bash: 3\ndatabase:\n  backend: mongo\n",
    );
    const e = errorOf(() => loadAppConfig({ cwd: t.dir, env: {}, dotenv: false }));
    expect(e.code).toBe("config_invalid");
    expect(e.message).toContain(`Invalid configuration in ${file}`);
    expect(e.message).toContain('models[0].supports_vision: expected boolean, received the string "maybe"');
    expect(e.message).toContain('models[0].max_tokens: expected number, received the string "lots"');
    expect(e.message).toContain("sandbox.allow_host_bash: expected boolean, received number 3");
    expect(e.message).toContain('database.backend: expected one of "memory" | "sqlite" | "postgres", received the string "mongo"');
  });

  it("required model fields are reported", () => {
    expect(() => appConfigFromText("models:\n  - name: a\n    use: openai\n")).toThrow(/models\[0\]\.model: is required \(expected string\)/);
  });

  it("unknown keys are kept; null sections take defaults", () => {
    const { config } = appConfigFromText("my_extension:\n  level: 3\nmemory:\ntitle: null\nmodels:\nsandbox:\n  custom_flag: true\n");
    const c = config as Record<string, unknown>;
    expect(c.my_extension).toEqual({ level: 3 });
    expect(config.memory.enabled).toBe(true);
    expect(config.title).toMatchObject({ enabled: true, max_words: 6, max_chars: 60 });
    expect(config.models).toEqual([]);
    expect((config.sandbox as Record<string, unknown>).custom_flag).toBe(true);
  });

  it("an empty file is a valid config with every default", () => {
    const { config, warnings } = appConfigFromText("");
    expect(config.config_version).toBe(0);
    expect(config.token_usage.enabled).toBe(true);
    expect(config.summarization.enabled).toBe(false);
    expect(warnings[0]).toContain("deerflow config upgrade");
  });
});

describe("config_version", () => {
  it("older versions warn through the logger and the warnings array", () => {
    t.write("config.yaml", "config_version: 30\n");
    const logger = memoryLogger();
    const loaded = loadAppConfig({ cwd: t.dir, env: {}, dotenv: false, logger });
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toContain("config_version 30, older than this release's 34");
    expect(loaded.warnings[0]).toContain("deerflow config upgrade");
    expect(logger.lines).toEqual(loaded.warnings);
  });

  it("current version is silent", () => {
    t.write("config.yaml", MINIMAL);
    expect(loadAppConfig({ cwd: t.dir, env: {}, dotenv: false, logger: memoryLogger() }).warnings).toEqual([]);
  });
});

describe("extensions merge", () => {
  it("config.yaml's explicit extensions: keys win over extensions_config.json", () => {
    t.write("config.yaml", "extensions:\n  middlewares:\n    - my.mod:Mw\n");
    t.write("extensions_config.json", JSON.stringify({ middlewares: ["other:X"], mcpServers: { a: { command: "npx" } } }));
    const { config } = loadAppConfig({ cwd: t.dir, env: {}, dotenv: false, logger: memoryLogger() });
    expect(config.extensions.middlewares).toEqual(["my.mod:Mw"]);
    expect(config.extensions.mcpServers.a).toMatchObject({ command: "npx", enabled: true, type: "stdio" });
  });

  it("extensions JSON syntax errors name file and position", () => {
    t.write("config.yaml", MINIMAL);
    const file = t.write("extensions_config.json", '{\n  "mcpServers": {,}\n}');
    const e = errorOf(() => loadAppConfig({ cwd: t.dir, env: {}, dotenv: false }));
    expect(e.message).toContain(`JSON syntax error in ${file}`);
  });
});

describe("ConfigManager hot reload", () => {
  function bump(file: string, seconds: number) {
    const when = new Date(Date.now() + seconds * 1000);
    utimesSync(file, when, when);
  }

  it("caches, reloads on change, and keeps the last good config on a broken edit", () => {
    const file = t.write("config.yaml", "config_version: 34\ntitle:\n  max_words: 6\n");
    const logger = memoryLogger();
    const mgr = new ConfigManager({ cwd: t.dir, env: {}, dotenv: false, logger });
    const first = mgr.get();
    expect(first.title.max_words).toBe(6);
    expect(mgr.get()).toBe(first); // cached

    t.write("config.yaml", "config_version: 34\ntitle:\n  max_words: 9\n");
    bump(file, 5);
    expect(mgr.get().title.max_words).toBe(9);

    t.write("config.yaml", "config_version: 34\ntitle:\n  max_words: [\n");
    bump(file, 10);
    const kept = mgr.get();
    expect(kept.title.max_words).toBe(9);
    expect(mgr.lastError?.code).toBe("config_syntax");
    expect(logger.lines.some((l) => l.includes("keeping the last good config"))).toBe(true);

    t.write("config.yaml", "config_version: 34\ntitle:\n  max_words: 4\n");
    bump(file, 15);
    expect(mgr.get().title.max_words).toBe(4);
    expect(mgr.lastError).toBeNull();
  });

  it("the first load throws; set() overrides; reset() reloads", () => {
    t.write("config.yaml", "models: 3\n");
    const mgr = new ConfigManager({ cwd: t.dir, env: {}, dotenv: false, logger: memoryLogger() });
    expect(() => mgr.get()).toThrow(ConfigError);
    const fixed = appConfigFromText(MINIMAL).config;
    mgr.set(fixed);
    expect(mgr.get()).toBe(fixed);
    mgr.set(null);
    t.write("config.yaml", MINIMAL);
    mgr.reset();
    expect(mgr.get().config_version).toBe(34);
  });

  it("reloads when extensions_config.json changes", () => {
    t.write("config.yaml", MINIMAL);
    const ext = t.write("extensions_config.json", JSON.stringify({ skills: { a: { enabled: true } } }));
    const mgr = new ConfigManager({ cwd: t.dir, env: {}, dotenv: false, logger: memoryLogger() });
    expect(mgr.get().extensions.skills.a.enabled).toBe(true);
    t.write("extensions_config.json", JSON.stringify({ skills: { a: { enabled: false } } }));
    bump(ext, 5);
    expect(mgr.get().extensions.skills.a.enabled).toBe(false);
  });
});
