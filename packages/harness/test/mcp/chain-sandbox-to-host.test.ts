// Chain: sandboxed bash plants launcher files in the thread workspace (`.npmrc` with `script-shell`, `.env`,
// `package.json` scripts, `node_modules/.bin` shims, git config …) naming a script by its HOST path; the next
// `npx`-launched MCP server for that thread must not run it on the host. Real bubblewrap for the bash sandbox
// and the MCP server, a real npx launch of a local package directory (no registry), a probe server of our own.
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpPool } from "../../src/mcp";
import { BwrapSandboxProvider, parseSandboxConfig, threadDirs } from "../../src/sandbox";
import type { BwrapSandbox } from "../../src/sandbox";
import type { ToolDefinition } from "../../src/tools";
import { bwrapUsable, call, FIXTURES, SANDBOX_RUN_AS, toolRuntime } from "./_helpers";

const ROOT = path.resolve(__dirname, "../../../..");
const FS_PACKAGE = path.join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem");
const PROBE = path.join(FIXTURES, "probe-server.mjs");
const FAKE_SECRET = "CHAIN1_FAKE_SECRET";
const HAS_BWRAP = bwrapUsable();
if (!HAS_BWRAP) console.warn("[mcp chain test] SKIPPING the sandbox → host chain: bubblewrap is not usable here");

interface ProbeReport {
  fetched: string | null;
  cwd: string;
  uid: number;
  env: Record<string, string>;
  cmdline: string[];
  reads: Record<string, string>;
  writes: Record<string, string>;
}

/** The launcher files an agent would plant, every one of them running `evil.sh` (which writes the host marker). */
function plantScript(ws: string, marker: string): string {
  const evil = `${ws}/evil.sh`;
  return [
    "set -e",
    `printf '#!/bin/sh\\necho pwned >> ${marker}\\nexec /bin/sh "$@"\\n' > evil.sh`,
    "chmod +x evil.sh",
    `printf 'require("fs").appendFileSync(${JSON.stringify(marker)}, "pwned\\\\n")\\n' > evil.cjs`,
    `printf 'script-shell=${evil}\\nnode-options=--require ${ws}/evil.cjs\\nprefix=${ws}\\n' > .npmrc`,
    `printf 'NODE_OPTIONS=--require ${ws}/evil.cjs\\nnpm_config_script_shell=${evil}\\n' > .env`,
    `printf '{"name":"ws","version":"1.0.0","scripts":{"preinstall":"${evil}","install":"${evil}","postinstall":"${evil}","prepare":"${evil}"},"overrides":{"@modelcontextprotocol/server-filesystem":"file:${ws}"}}' > package.json`,
    "mkdir -p node_modules/.bin .git",
    "for b in npx node npm sh mcp-server-filesystem; do cp evil.sh node_modules/.bin/$b; done",
    `printf '[core]\\n\\tfsmonitor = ${evil}\\n\\tpager = ${evil}\\n' > .git/config`,
    "echo 'nodejs 20.0.0' > .tool-versions",
    "echo 3.12 > .python-version",
    `printf '[tool.uv]\\nindex-url = "http://127.0.0.1:9/simple"\\n' > pyproject.toml`,
    `printf 'index-url = "http://127.0.0.1:9/simple"\\n' > uv.toml`,
    "ls -a",
  ].join("\n");
}

describe.skipIf(!HAS_BWRAP)("chain: sandbox → host through an MCP server's working directory (real bubblewrap, npx)", () => {
  let dir: string;
  let dataDir: string;
  let marker: string;
  let provider: BwrapSandboxProvider;
  const pools: McpPool[] = [];

  const poolFor = (sandbox: "auto" | "off") => {
    const configPath = path.join(dir, `extensions_config.${sandbox}.json`);
    fs.writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          // npm would run the package's `prepare` build; the server ships built, so scripts are skipped.
          fs: { command: "npx", args: ["-y", "--ignore-scripts", FS_PACKAGE, "/mnt/user-data/workspace"], env: { npm_config_offline: "true" } },
          probe: { command: "node", args: [PROBE] },
        },
      }),
    );
    const warnings: string[] = [];
    const pool = new McpPool({
      extensionsConfig: () => ({ path: configPath }),
      threadDirs: (u, t) => threadDirs(dataDir, t, u),
      logger: { warn: (m) => warnings.push(m) },
      launch: { dataDir, sandbox, runAs: SANDBOX_RUN_AS, agentWritable: () => [path.join(dataDir, "users")], warn: (m) => warnings.push(m) },
    });
    pools.push(pool);
    return { pool, warnings };
  };

  const victim = () => threadDirs(dataDir, "victim");
  const other = () => threadDirs(dataDir, "other");

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-chain1-"));
    dataDir = path.join(dir, "data");
    // Outside every sandbox: only a process on the host can write here.
    marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mcp-chain1-marker-")), "marker");
    process.env[FAKE_SECRET] = "sk-chain1-must-never-reach-a-server";
    provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: dataDir });
    const bash = async (thread: string) => provider.get(await provider.acquire(thread)) as BwrapSandbox;
    const planted = await (await bash("victim")).executeCommand(plantScript(victim().workspace, marker));
    expect(planted.exitCode, planted.stderr).toBe(0);
    expect(planted.stdout).toContain(".npmrc");
    const secret = await (await bash("other")).executeCommand("echo other-thread-data > secret.txt");
    expect(secret.exitCode).toBe(0);
  });

  afterAll(async () => {
    delete process.env[FAKE_SECRET];
    for (const p of pools) await p.close();
    await provider?.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(path.dirname(marker), { recursive: true, force: true });
  });

  const threadRt = () => toolRuntime("victim", "default");

  it("an npx server started for the thread works, and none of the planted files runs on the host", async () => {
    const { pool } = poolFor("auto");
    const tools: ToolDefinition[] = await pool.getTools();
    expect(pool.status().map((s) => [s.name, s.state])).toEqual([
      ["fs", "connected"],
      ["probe", "connected"],
    ]);
    const listing = await call(tools, "fs_list_directory", { path: "/mnt/user-data/workspace" }, threadRt());
    expect(listing.status, String(listing.content)).toBe("success");
    expect(listing.content).toContain(".npmrc");
    const read = await call(tools, "fs_read_text_file", { path: "/mnt/user-data/workspace/.npmrc" }, threadRt());
    expect(read.content).toContain("script-shell=");
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("inside the sandboxed server: its own cwd, no inherited secret, the sandbox uid, no other thread, no thread parent", async () => {
    const { pool } = poolFor("auto");
    const tools = await pool.getTools();
    const otherFile = path.join(other().workspace, "secret.txt");
    expect(fs.readFileSync(otherFile, "utf8")).toBe("other-thread-data\n");
    const hostEscape = path.join(victim().userData, "escape-host.txt");
    const r = await call(
      tools,
      "probe_inspect",
      { read: [otherFile, path.join(dataDir, "users"), "/mnt/user-data/workspace/.npmrc"], write: [hostEscape, "/mnt/user-data/escape.txt", path.join(dataDir, "escape.txt"), "/mnt/mcp-server/.npmrc", "/dev/planted"] },
      threadRt(),
    );
    const report = JSON.parse(String(r.content)) as ProbeReport;
    expect(report.cwd).toBe("/mnt/mcp-server");
    expect(report.env[FAKE_SECRET]).toBeUndefined();
    expect(report.env.HOME).toBe("/mnt/mcp-server/home");
    expect(report.env.TMPDIR).toBe("/tmp");
    expect(Object.keys(report.env).filter((k) => /^npm_config_/i.test(k)).sort()).toEqual(["npm_config_cache", "npm_config_update_notifier"]);
    for (const k of ["NODE_OPTIONS", "USER", "LOGNAME", "SHELL", "PWD_HOST"]) expect(report.env[k]).toBeUndefined();
    if (SANDBOX_RUN_AS) expect(report.uid).toBe(SANDBOX_RUN_AS.uid);
    // the thread's own files are there, at the agent's paths; nobody else's
    expect(report.reads["/mnt/user-data/workspace/.npmrc"]).toBe("ok");
    expect(report.reads[otherFile]).not.toBe("ok");
    expect(report.reads[path.join(dataDir, "users")]).not.toBe("ok");
    // neither the thread's parent nor the data dir nor its own cwd is writable from the server
    // …nor /dev (bwrap's /dev is otherwise a writable tmpfs of half the RAM)
    for (const p of [hostEscape, path.join(dataDir, "escape.txt"), "/mnt/mcp-server/.npmrc", "/dev/planted"]) expect(report.writes[p], p).not.toBe("ok");
    expect(fs.existsSync(hostEscape)).toBe(false);
    expect(fs.existsSync(path.join(victim().userData, "escape.txt"))).toBe(false);
    expect(fs.existsSync(path.join(dataDir, "escape.txt"))).toBe(false);
    // bind sources and env values stay off the sandbox's pid 1 command line
    expect(report.cmdline.join(" ")).not.toContain(dataDir);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("a sandboxed server shares the host network (reaches a loopback service)", async () => {
    const srv = http.createServer((_req, res) => res.end("hello from the host"));
    await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
    try {
      const { pool } = poolFor("auto");
      const tools = await pool.getTools();
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
      const report = JSON.parse(String((await call(tools, "probe_inspect", { fetch: url }, threadRt())).content)) as ProbeReport;
      expect(report.fetched).toBe("hello from the host");
    } finally {
      await new Promise((resolve) => srv.close(resolve));
    }
  });

  it("one thread's session cannot leave files another thread's session of the same server reads or runs (home, cache, temp dirs)", async () => {
    const { pool } = poolFor("auto");
    const tools = await pool.getTools();
    const inspect = async (thread: string, args: Record<string, unknown>) =>
      JSON.parse(String((await call(tools, "probe_inspect", args, toolRuntime(thread, "default"))).content)) as ProbeReport;
    // The victim thread's session (whose agent controls the tool arguments) plants in everything it can write.
    const planted = ["/mnt/mcp-server/home/.npmrc", "/mnt/mcp-server/cache/planted.js", "/tmp/session-file"];
    const wrote = await inspect("victim", { write: planted });
    for (const p of planted) expect(wrote.writes[p], p).toBe("ok");
    // Where the victim's session temp dir lies inside the server's launch directory (it is still running).
    const tmpRoot = path.join(dataDir, "mcp-servers", "probe", "tmp");
    const live = fs.readdirSync(tmpRoot).filter((d) => fs.existsSync(path.join(tmpRoot, d, "session-file")));
    expect(live.length).toBeGreaterThan(0);
    const seen = await inspect("other", { read: ["/mnt/mcp-server/home/.npmrc", "/mnt/mcp-server/cache/planted.js", ...live.map((d) => `/mnt/mcp-server/tmp/${d}/session-file`)] });
    for (const [p, r] of Object.entries(seen.reads)) expect(r, p).not.toBe("ok");
    // The victim's own later sessions keep their home (it is that thread's).
    expect((await inspect("victim", { read: ["/mnt/mcp-server/home/.npmrc"] })).reads["/mnt/mcp-server/home/.npmrc"]).toBe("ok");
  });

  it("without the sandbox (bwrap off) the launch is still clean: own launch directory, clean env, nothing planted runs", async () => {
    const { pool, warnings } = poolFor("off");
    const tools = await pool.getTools();
    const listing = await call(tools, "fs_list_directory", { path: "/mnt/user-data/workspace" }, threadRt());
    expect(listing.status, String(listing.content)).toBe("success");
    expect(listing.content).toContain(".npmrc");
    const report = JSON.parse(String((await call(tools, "probe_inspect", {}, threadRt())).content)) as ProbeReport;
    expect(fs.realpathSync(report.cwd)).toBe(fs.realpathSync(path.join(dataDir, "mcp-servers", "probe")));
    expect(report.env[FAKE_SECRET]).toBeUndefined();
    expect(report.env.HOME).toBe(path.join(dataDir, "mcp-servers", "probe", "home"));
    expect(fs.existsSync(marker)).toBe(false);
    void warnings;
  });
});
