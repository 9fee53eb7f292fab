import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startCli, stopChild, tempDir } from "../helpers";

const READY = /DeerFlow is running at (\S+)/;

/** A config with one model (never called: these tests only start the server). */
function writeConfig(file: string): void {
  writeFileSync(file, ["config_version: 34", "models:", "  - name: m", "    use: openai-compatible", "    model: m", "    api_key: k", "    base_url: http://127.0.0.1:9/v1", "sandbox:", "  use: local", ""].join("\n"));
}

describe("deerflow serve names the config it runs on", { timeout: 60_000 }, () => {
  it("prints the absolute path of the config found, and that --demo is ignored because of it", async () => {
    const dir = tempDir();
    writeConfig(path.join(dir, "config.yaml"));
    const { child, output } = await startCli(["serve", "--demo", "--port", "0", "--no-web-build"], { cwd: dir, ready: READY });
    try {
      const lines = output().split("\n");
      expect(lines).toContain(`Config: ${path.join(dir, "config.yaml")} (--demo is ignored: it applies only when no config.yaml is found; move or delete this file for the demo)`);
      expect(output()).not.toContain("DEMO mode");
    } finally {
      await stopChild(child);
    }
  });

  it("resolves a relative --config to its absolute path", async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, "conf"));
    writeConfig(path.join(dir, "conf", "mine.yaml"));
    const { child, output } = await startCli(["serve", "--config", "conf/mine.yaml", "--port", "0", "--no-web-build"], { cwd: dir, ready: READY });
    try {
      expect(output().split("\n")).toContain(`Config: ${path.join(dir, "conf", "mine.yaml")}`);
    } finally {
      await stopChild(child);
    }
  });

  it("in demo mode names the paths it looked for", async () => {
    const dir = path.join(tempDir(), "empty");
    mkdirSync(dir);
    const { child, output } = await startCli(["serve", "--demo", "--port", "0", "--no-web-build"], { cwd: dir, ready: READY });
    try {
      expect(output()).toContain(`No config.yaml found (looked for ${path.join(dir, "config.yaml")}, ${path.join(path.dirname(dir), "config.yaml")}): starting in DEMO mode`);
      expect(output()).not.toContain("Config: ");
    } finally {
      await stopChild(child);
    }
  });
});
