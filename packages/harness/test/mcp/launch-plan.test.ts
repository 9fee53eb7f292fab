import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extensionsConfigSchema } from "../../src/config";
import type { McpServerConfig } from "../../src/config";
import { mcpServerDirName, planStdioLaunch, removeThreadServerDirs } from "../../src/mcp";
import type { McpLaunchSettings } from "../../src/mcp";
import { threadDirs } from "../../src/sandbox";
import { bwrapUsable, FIXTURES, SANDBOX_RUN_AS } from "./_helpers";

const server = (raw: Record<string, unknown>): McpServerConfig => extensionsConfigSchema.parse({ mcpServers: { s: raw } }).mcpServers.s;
const PROBE = path.join(FIXTURES, "probe-server.mjs");

describe("planStdioLaunch", () => {
  let dir: string;
  let dataDir: string;
  let settings: McpLaunchSettings;
  const saved: Record<string, string | undefined> = {};

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-plan-"));
    dataDir = path.join(dir, "data");
    settings = { dataDir, sandbox: "off", runAs: SANDBOX_RUN_AS, agentWritable: () => [path.join(dataDir, "users"), path.join(dir, "rw-mount")] };
    // What the gateway's own environment may hold: a secret, npm settings (npm sets these for `npm test`), NODE_OPTIONS.
    for (const [k, v] of Object.entries({ PLAN_TEST_API_KEY: "sk-secret", npm_config_script_shell: "/evil.sh", NODE_OPTIONS: "--require /evil.cjs", USER: "root" })) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("starts in the server's own launch directory with only the declared env over a minimal one", async () => {
    const thread = threadDirs(dataDir, "t1", "u1");
    const launch = await planStdioLaunch("gh", server({ command: "node", args: [PROBE], env: { GITHUB_TOKEN: "declared" } }), { GITHUB_TOKEN: "declared" }, { thread }, settings);
    launch.onExit?.();
    const root = path.join(dataDir, "mcp-servers", "gh");
    expect(launch.sandboxed).toBe(false);
    expect(launch.cwd).toBe(root);
    expect(launch.argv).toEqual(["/usr/bin/node", PROBE]);
    expect(Object.keys(launch.env).sort()).toEqual(
      ["GITHUB_TOKEN", "HOME", "LANG", "PATH", "TMPDIR", "UV_CACHE_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "npm_config_cache", "npm_config_update_notifier"].sort(),
    );
    expect(launch.env).toMatchObject({ GITHUB_TOKEN: "declared", HOME: path.join(root, "home"), npm_config_cache: path.join(root, "cache", "npm"), PATH: "/usr/local/bin:/usr/bin:/bin" });
    expect(launch.env.TMPDIR.startsWith(path.join(root, "tmp") + path.sep)).toBe(true);
    // the launch directory belongs to the service user and nobody else may write it
    const st = fs.statSync(root);
    expect(st.uid).toBe(process.getuid?.());
    expect(st.mode & 0o022).toBe(0);
    // unsandboxed, the agent's virtual paths are translated for the server
    expect(launch.mapArgs({ path: "/mnt/user-data/workspace/a.txt", n: 1 })).toEqual({ path: path.join(thread.workspace, "a.txt"), n: 1 });
  });

  it("removes the session's temp dir when the session ends", async () => {
    const launch = await planStdioLaunch("tmpcheck", server({ command: "node", args: [PROBE] }), {}, {}, settings);
    expect(fs.existsSync(launch.env.TMPDIR)).toBe(true);
    launch.onExit?.();
    expect(fs.existsSync(launch.env.TMPDIR)).toBe(false);
  });

  it("refuses to launch anything from a place the agent can write or from the data dir, and paths that contain the data dir", async () => {
    const ws = threadDirs(dataDir, "t2").workspace;
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, "server.mjs"), "");
    fs.mkdirSync(path.join(dataDir, "agents"), { recursive: true });
    const cases: Array<[Record<string, unknown>, Record<string, string>, RegExp]> = [
      [{ command: "node", args: [path.join(ws, "server.mjs")] }, {}, /names .*server\.mjs, which the agent's sandbox can write/],
      [{ command: "npx", args: ["-y", `--prefix=${ws}`, "pkg"] }, {}, /which the agent's sandbox can write/],
      [{ command: "node", args: [path.join(dataDir, "agents")] }, {}, /inside the data dir/],
      [{ command: "node", args: ["/"] }, {}, /contains the data dir/],
      [{ command: "node", args: [PROBE] }, { PATH: `${ws}:/usr/bin` }, /env\.PATH names .*which the agent's sandbox can write/],
      [{ command: "node", args: [PROBE] }, { PATH: "/mnt/user-data/workspace:/usr/bin" }, /env\.PATH names \/mnt\/user-data\/workspace/],
    ];
    for (const [raw, env, message] of cases) {
      await expect(planStdioLaunch("bad", server(raw), env, {}, settings)).rejects.toThrow(message);
    }
  });

  it("refuses a launch directory below a writable custom mount (launchers read every parent), sandboxed or not", async () => {
    const mounted = path.join(dir, "rw-mount", "deer");
    await expect(planStdioLaunch("s", server({ command: "node", args: [PROBE] }), {}, {}, { ...settings, dataDir: mounted })).rejects.toThrow(
      /launch directory .* is inside .*rw-mount, which the agent's sandbox can write/,
    );
    await expect(planStdioLaunch("s", server({ command: "node", args: [PROBE] }), {}, {}, { ...settings, sandbox: "auto", dataDir: mounted })).rejects.toThrow(/is inside .*rw-mount/);
  });

  it("gives every server name its own directory segment", () => {
    expect(mcpServerDirName("github")).toBe("github");
    expect(mcpServerDirName("../x")).toMatch(/^x-[0-9a-f]{12}$/);
    expect(mcpServerDirName("a b")).not.toBe(mcpServerDirName("a_b"));
  });

  it("without a usable bwrap the launch is unsandboxed but clean, with one warning; \"sandbox\": false warns per server", async () => {
    const warnings: string[] = [];
    const broken = { ...settings, sandbox: "auto" as const, bwrapPath: path.join(dir, "no-such-bwrap"), warn: (m: string) => warnings.push(m) };
    for (const name of ["nb1", "nb2"]) {
      const launch = await planStdioLaunch(name, server({ command: "node", args: [PROBE] }), {}, {}, broken);
      launch.onExit?.();
      expect(launch.sandboxed).toBe(false);
      expect(launch.cwd).toBe(path.join(dataDir, "mcp-servers", name));
      expect(launch.env.PLAN_TEST_API_KEY).toBeUndefined();
    }
    expect(warnings.filter((w) => w.includes("bubblewrap is not usable"))).toHaveLength(1);
    const optOut = await planStdioLaunch("optout", server({ command: "node", args: [PROBE], sandbox: false }), {}, {}, { ...settings, sandbox: "auto", warn: (m) => warnings.push(m) });
    optOut.onExit?.();
    expect(optOut.sandboxed).toBe(false);
    expect(warnings.some((w) => w.includes("MCP server 'optout' runs on the host without its bubblewrap sandbox"))).toBe(true);
  });

  it.skipIf(!bwrapUsable())("sandboxed: bwrap options (binds, env values) travel on fd 3, not on any command line", async () => {
    const thread = threadDirs(dataDir, "t3", "u1");
    const launch = await planStdioLaunch("sbx", server({ command: "node", args: [PROBE], env: { API_TOKEN: "tok-123" } }), { API_TOKEN: "tok-123" }, { thread }, { ...settings, sandbox: "auto" });
    launch.onExit?.();
    expect(launch.sandboxed).toBe(true);
    expect(launch.env).toEqual({ PATH: "/usr/bin:/bin" });
    const bwrapAt = launch.argv.findIndex((a) => a.endsWith("/bwrap"));
    expect(launch.argv.slice(bwrapAt, bwrapAt + 4)).toEqual([launch.argv[bwrapAt], "--args", "3", "--"]);
    expect(launch.argv.slice(bwrapAt + 4)).toEqual(["/usr/bin/node", PROBE]);
    expect(launch.argv.join(" ")).not.toContain("tok-123");
    expect(launch.argv.slice(bwrapAt).join(" ")).not.toContain(thread.userData);
    const options = launch.fd3!.toString("utf8").split("\0");
    expect(options).toContain("tok-123");
    expect(options).toContain("/mnt/user-data/workspace");
    expect(options).not.toContain("--unshare-net");
  });

  it.skipIf(!bwrapUsable())("sandboxed thread sessions get that thread's own home and cache, removed with the thread", async () => {
    const a = threadDirs(dataDir, "home-a", "u1");
    const b = threadDirs(dataDir, "home-b", "u1");
    const homes = path.join(dataDir, "mcp-servers", "homes", "threads");
    const plan = async (thread: typeof a) => {
      const launch = await planStdioLaunch("homes", server({ command: "node", args: [PROBE] }), {}, { thread }, { ...settings, sandbox: "auto" });
      launch.onExit?.();
      return fs.readdirSync(homes).sort();
    };
    const afterA = await plan(a);
    expect(afterA).toHaveLength(1);
    expect(fs.readdirSync(path.join(homes, afterA[0])).sort()).toEqual(["cache", "home"]);
    expect(await plan(a)).toEqual(afterA);
    const afterB = await plan(b);
    expect(afterB).toHaveLength(2);
    expect(await removeThreadServerDirs(dataDir, a.userData)).toEqual([]);
    expect(fs.readdirSync(homes)).toEqual(afterB.filter((k) => k !== afterA[0]));
  });
});
