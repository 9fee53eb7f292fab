import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENV_VARS, listenAddressFromEnv, readEnv, resolveConfigPath, resolveExtensionsConfigPath } from "../../src/config";
import { tempDir } from "./helpers";

const docs = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../docs/configuration.md"), "utf8");

describe("environment variable names", () => {
  it("our own names use DEER_FLOW_; their earlier DEERFLOW_ spellings are read as aliases", () => {
    expect(readEnv("DEER_FLOW_SKIP_WEB_BUILD", { DEERFLOW_SKIP_WEB_BUILD: "1" })).toBe("1");
    expect(readEnv("DEER_FLOW_SKIP_WEB_BUILD", { DEER_FLOW_SKIP_WEB_BUILD: "0", DEERFLOW_SKIP_WEB_BUILD: "1" })).toBe("0");
    expect(readEnv("DEER_FLOW_AGENT_MODULE", { DEERFLOW_AGENT_MODULE: "/x.ts" })).toBe("/x.ts");
    expect(readEnv("DEER_FLOW_SSE_MAX_BACKLOG_BYTES", { DEERFLOW_SSE_MAX_BACKLOG_BYTES: "4096" })).toBe("4096");
    expect(readEnv("DEER_FLOW_SKIP_WEB_BUILD", { DEER_FLOW_SKIP_WEB_BUILD: "" })).toBeUndefined();
    for (const v of ENV_VARS) for (const a of v.aliases) expect(a, v.name).toMatch(/^DEERFLOW_/);
    for (const v of ENV_VARS.filter((x) => x.origin === "ours")) expect(v.name).toMatch(/^DEER_FLOW_/);
  });

  it("DeerFlow's names are kept exactly as DeerFlow spells them", () => {
    const deerflow = ENV_VARS.filter((v) => v.origin === "deerflow").map((v) => v.name);
    expect(deerflow).toEqual(expect.arrayContaining(["DEER_FLOW_HOME", "DEER_FLOW_CONFIG_PATH", "DEER_FLOW_EXTENSIONS_CONFIG_PATH", "DEER_FLOW_AUTH_DISABLED", "DEERFLOW_ENABLE_TEST_SEED"]));
  });

  it("DEER_FLOW_CONFIG_PATH and DEER_FLOW_EXTENSIONS_CONFIG_PATH select the files", () => {
    const t = tempDir();
    try {
      const cfg = t.write("elsewhere/my.yaml", "config_version: 34\n");
      const ext = t.write("elsewhere/ext.json", "{}");
      const env = { DEER_FLOW_CONFIG_PATH: cfg, DEER_FLOW_EXTENSIONS_CONFIG_PATH: ext };
      expect(resolveConfigPath({ cwd: t.dir, env })).toBe(cfg);
      expect(resolveExtensionsConfigPath({ cwd: t.dir, env })).toBe(ext);
    } finally {
      t.cleanup();
    }
  });

  it("serve reads PORT and HOST; a bad PORT names the variable", () => {
    expect(listenAddressFromEnv({ PORT: "8080", HOST: "0.0.0.0" })).toEqual({ port: 8080, host: "0.0.0.0" });
    expect(listenAddressFromEnv({})).toEqual({});
    expect(() => listenAddressFromEnv({ PORT: "80a" })).toThrow(/The PORT environment variable must be an integer 0-65535, got '80a'/);
  });

  it("docs/configuration.md has one table with every variable and its aliases", () => {
    const rows = docs.split("\n").filter((l) => /^\| `[A-Z_]+`/.test(l));
    const documented = rows.map((r) => /^\| `([A-Z_]+)`/.exec(r)![1]);
    expect(documented).toEqual(ENV_VARS.map((v) => v.name));
    for (const v of ENV_VARS) for (const a of v.aliases) expect(rows.find((r) => r.startsWith(`| \`${v.name}\``))).toContain(a);
  });
});
