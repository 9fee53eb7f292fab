import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { registerServeProcess } from "../../src/commands/serve-peers";
import { checkWorkersAllowed, parseWorkers, runSharing } from "../../src/commands/serve-workers";
import { cleanEnv, runCli, startCli, stopChild, tempDir } from "../helpers";

/** config.yaml with one model (never called: these tests stop before or right after listening). */
function writeConfig(dir: string, extra: string[] = []): void {
  writeFileSync(
    path.join(dir, "config.yaml"),
    ["config_version: 34", "models:", "  - name: m", "    use: openai-compatible", "    model: x", "    base_url: http://127.0.0.1:9/v1", "    api_key: k", "sandbox:", "  use: local", ...extra, ""].join("\n"),
  );
}

describe("deerflow serve --workers", { timeout: 60_000 }, () => {
  it("refuses N > 1 on SQLite and the memory bridge, naming both keys, before listening", async () => {
    const dir = tempDir();
    writeConfig(dir);
    const r = await runCli(["serve", "--workers", "2", "--port", "0", "--data-dir", "data"], { cwd: dir, env: cleanEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--workers 2 needs runs shared between processes");
    expect(r.stderr).toContain("database.backend is 'sqlite' (needs 'postgres'");
    expect(r.stderr).toContain("stream_bridge.type is 'memory' (needs 'redis'");
    expect(r.stdout).not.toContain("DeerFlow is running");
  });

  it("names only the key that is wrong", () => {
    const pgOnly = { database: { backend: "postgres", postgres_url: "postgres://x@127.0.0.1/db" }, stream_bridge: { type: "memory" } } as unknown as AppConfig;
    expect(() => checkWorkersAllowed(3, pgOnly, false)).toThrow(/but stream_bridge\.type is 'memory' \(needs 'redis'.*\)\. Set/);
    expect(() => checkWorkersAllowed(3, pgOnly, false)).not.toThrow(/database\.backend is/);
    const both = { database: { backend: "postgres" }, stream_bridge: { type: "redis" } } as unknown as AppConfig;
    expect(() => checkWorkersAllowed(4, both, false)).not.toThrow();
    expect(runSharing(both).shared).toBe(true);
    // one worker is always allowed; demo mode never shares
    expect(() => checkWorkersAllowed(1, undefined, true)).not.toThrow();
    expect(() => checkWorkersAllowed(2, undefined, true)).toThrow(/demo mode/);
  });

  it("validates the count", () => {
    expect(parseWorkers(undefined)).toBe(1);
    expect(parseWorkers("4")).toBe(4);
    for (const bad of ["0", "-1", "1.5", "x", "1000"]) expect(() => parseWorkers(bad), bad).toThrow(/--workers must be an integer 1-256/);
  });

  it("two separately started processes on one SQLite data dir both serve; the second warns that runs are not shared", async () => {
    const dir = tempDir();
    writeConfig(dir);
    const env = cleanEnv();
    const ready = /DeerFlow is running at (http:\/\/\S+)/;
    const a = await startCli(["serve", "--port", "0", "--data-dir", "data"], { cwd: dir, env, ready });
    try {
      const b = await startCli(["serve", "--port", "0", "--data-dir", "data"], { cwd: dir, env, ready });
      try {
        for (const url of [a.match[1], b.match[1]]) expect((await fetch(`${url}/health`)).status).toBe(200);
        expect(a.output()).not.toContain("runs are not shared");
        expect(b.output()).toContain(`WARNING: another deerflow serve (pid ${a.child.pid}) uses the data dir ${path.join(dir, "data")}`);
        expect(b.output()).toContain("runs are not shared between them");
        expect(b.output()).toContain("database.backend: postgres and stream_bridge.type: redis");
      } finally {
        await stopChild(b.child);
      }
    } finally {
      await stopChild(a.child);
    }
  });

  it("a marker left by a killed process is not a peer", () => {
    const dir = tempDir();
    // a pid that is not running: the largest pid Linux hands out is below 2^22
    const stale = registerServeProcess(dir, 4_194_301);
    expect(stale.peers).toEqual([]);
    const me = registerServeProcess(dir);
    expect(me.peers).toEqual([]);
    me.release();
    const again = registerServeProcess(dir, 4_194_302);
    expect(again.peers).toEqual([]);
    again.release();
  });
});
