/**
 * What a new user does, with no repository around: `npm pack` every published package, `npm install` the
 * tarballs into an empty folder, then `npx deerflow init --yes` against an OpenAI-compatible server (the
 * scripted test double), `doctor`, `run`, `serve` (the API and the web UI), `skills list` (the bundled
 * skills) and `config upgrade` (the shipped config.example.yaml). Each would fail if a package still reached
 * into the repository: a path import of another package's src/, TypeScript run through tsx, an asset found
 * by a repository-relative path.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { packAndInstall, REPO } from "./installed-package";
import type { InstalledPackage } from "./installed-package";

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The user's environment: none of this repository's or the test runner's settings. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(DEER_?FLOW|NODE_OPTIONS$|VITEST|npm_|OPENAI|ANTHROPIC|FORCE_COLOR$)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: "1", npm_config_update_notifier: "false" };
}

describe("the packed tarballs, installed into an empty folder", { timeout: 120_000 }, () => {
  let installed: InstalledPackage;
  let llm: ScriptedLLMServer;
  let serve: ChildProcess | undefined;

  /** `npx deerflow …` in the install folder, to completion. */
  function npx(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Result> {
    return new Promise((resolve, reject) => {
      const child = spawn("npx", ["--no", "deerflow", ...args], { cwd: installed.dir, env: { ...userEnv(), ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  beforeAll(async () => {
    installed = packAndInstall();
    llm = await startScriptedLLMServer({ script: [] });
  }, 600_000);

  afterAll(async () => {
    serve?.kill("SIGKILL");
    await llm?.close();
    installed?.close();
  });

  it("installs outside the repository, with the compiled dist/ and no TypeScript sources or tests", () => {
    expect(path.relative(REPO, installed.dir).startsWith("..")).toBe(true);
    expect([...installed.tarballs].sort()).toEqual(["deerflow-ts-0.1.0.tgz", "deerflow-ts-harness-0.1.0.tgz", "deerflow-ts-server-0.1.0.tgz", "deerflow-ts-web-0.1.0.tgz"]);
    const mods = path.join(installed.dir, "node_modules");
    for (const pkg of ["deerflow-ts", "@deerflow-ts/harness", "@deerflow-ts/server", "@deerflow-ts/web"]) {
      expect(existsSync(path.join(mods, pkg, "LICENSE")), `${pkg}/LICENSE`).toBe(true);
      expect(existsSync(path.join(mods, pkg, "src")), `${pkg}/src`).toBe(false);
      expect(existsSync(path.join(mods, pkg, "test")), `${pkg}/test`).toBe(false);
    }
    expect(existsSync(path.join(mods, "tsx")), "tsx is a dev dependency only").toBe(false);
    for (const [name, files] of Object.entries(installed.packedFiles)) {
      expect(files, name).toContain("LICENSE");
      expect(files.filter((f) => /(^|\/)(test|fixtures)\/|\.test\.|^src\//.test(f)), `${name}: tests, fixtures or sources packed`).toEqual([]);
    }
    expect(existsSync(path.join(mods, "@deerflow-ts/web/dist/index.html"))).toBe(true);
  });

  it("`npx deerflow init --yes` writes config.yaml for the OpenAI-compatible server", async () => {
    const r = await npx(["init", "--yes", "--provider", "openai-compatible", "--base-url", `${llm.url}/v1`, "--model", "scripted"]);
    expect(r.stderr).not.toMatch(/Error|Cannot find/);
    expect(r.code).toBe(0);
    const config = readFileSync(path.join(installed.dir, "config.yaml"), "utf8");
    expect(config).toContain(`base_url: "${llm.url}/v1"`);
    expect(config).toContain('model: "scripted"');
  });

  it("`doctor` checks that config and reaches the model", async () => {
    llm.push({ text: "pong" } as never);
    const r = await npx(["doctor"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(path.join(installed.dir, "config.yaml"));
    expect(llm.requests.length).toBeGreaterThan(0);
  });

  it("`run` answers from the model", async () => {
    // the reply, then spare ones for what runs after it (title, memory update)
    llm.push({ text: "Deer can run at sixty kilometres per hour." } as never, { text: "Deer speed" } as never, { text: "{}" } as never);
    const r = await npx(["run", "How fast are deer?"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Deer can run at sixty kilometres per hour.");
    expect(JSON.stringify(llm.requests.map((q) => q.body))).toContain("How fast are deer?");
  });

  it("`serve` answers /health and serves the prebuilt web UI at /", async () => {
    const child = spawn(installed.bin, ["serve", "--port", "0"], { cwd: installed.dir, env: userEnv(), stdio: ["ignore", "pipe", "pipe"] });
    serve = child;
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += d;
        const m = /DeerFlow is running at (http:\/\/\S+)/.exec(output);
        if (m) resolve(m[1]);
      };
      child.stdout.on("data", seen);
      child.stderr.on("data", seen);
      child.on("exit", (code) => reject(new Error(`serve exited (${code}) before listening:\n${output}`)));
    });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<title>DeerFlow</title>");
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html);
    expect(script, html).not.toBeNull();
    expect((await fetch(`${url}${script![1]}`)).status).toBe(200);
    expect(output).not.toMatch(/Web UI (unavailable|not built)/);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    serve = undefined;
  });

  it("`skills list` lists the skills bundled with the package", async () => {
    const r = await npx(["skills", "list"]);
    expect(r.code, r.stderr).toBe(0);
    for (const name of ["deep-research", "quick-searcher"]) expect(r.stdout).toContain(name);
  });

  it("`config upgrade` merges the shipped config.example.yaml", async () => {
    const r = await npx(["config", "upgrade"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain(path.join(installed.dir, "node_modules", "deerflow-ts", "assets", "config.example.yaml"));
  });

  it("the Docker sandbox's client (dockerode) is an optional dependency: not installed, and doctor names the command", async () => {
    expect(existsSync(path.join(installed.dir, "node_modules", "dockerode")), "dockerode installed by default").toBe(false);
    const config = parse(readFileSync(path.join(installed.dir, "config.yaml"), "utf8")) as Record<string, unknown>;
    const dockerConfig = path.join(installed.dir, "docker-config.yaml");
    writeFileSync(dockerConfig, stringify({ ...config, sandbox: { use: "docker" } }));
    llm.push({ text: "pong" } as never);
    const r = await npx(["doctor"], { DEER_FLOW_CONFIG_PATH: dockerConfig });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("npm install dockerode@5.0.1");
    expect(r.stdout + r.stderr).not.toMatch(/MODULE_NOT_FOUND|Cannot find module/);
  });
});
