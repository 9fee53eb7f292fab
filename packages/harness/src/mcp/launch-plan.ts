import { chownSync, copyFileSync, chmodSync, existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { McpServerConfig } from "../config";
import { bindStrategy, ensureThreadDirs, findBinary, probeBwrap, VIRTUAL_OUTPUTS, VIRTUAL_UPLOADS, VIRTUAL_USER_DATA, VIRTUAL_WORKSPACE } from "../sandbox";
import type { BwrapBind, CgroupSupport, ThreadDirs } from "../sandbox";
import { SandboxCgroup } from "../sandbox";
import { bwrapSupportsTmpSize } from "../sandbox/limits";
import type { CgroupLimits } from "../sandbox/limits";
import { McpError } from "./errors";
import type { McpPathScope } from "./path-mapping";
import { buildMcpSandboxLaunch, MCP_SANDBOX_CACHE, MCP_SANDBOX_HOME, MCP_SANDBOX_ROOT } from "./sandboxed-launch";
import { ensureMcpServerDirs, ensureThreadServerDirs, isWithin, MCP_THREAD_HOMES_DIR, mcpServerDirName, mcpServerDirs, sessionTmpDir } from "./server-dirs";
import type { McpServerDirs } from "./server-dirs";
import type { LaunchedProcessSpec } from "./stdio-transport";

/** How stdio servers are started on this machine (one per pool). */
export interface McpLaunchSettings {
  /** The data dir: launch directories live in `{dataDir}/mcp-servers/{server}`. */
  dataDir: string;
  /** `auto` (default): each stdio server in its own bubblewrap sandbox when bwrap works; `off`: never. */
  sandbox?: "auto" | "off";
  /** The uid/gid sandboxed servers run as when the service is root (the bash sandbox's uid). */
  runAs?: { uid: number; gid: number };
  /** Share the host network with sandboxed servers (default true). */
  network?: boolean;
  /** Host paths the agent's sandbox can write (thread data, writable custom mounts): never a launch place. */
  agentWritable?: () => string[];
  /**
   * The per-session cgroup limits of sandboxed servers (the bash sandbox's `sandbox.limits` where this
   * machine has writable cgroups): a session driven by one thread's agent cannot fork-flood or exhaust
   * the memory of the host and every other thread. Absent: no cgroup.
   */
  cgroup?: () => { support: CgroupSupport; limits: CgroupLimits } | undefined;
  /** Override the bwrap binary (tests). */
  bwrapPath?: string;
  /** Told once per distinct reason that a server runs without its sandbox. */
  warn?: (message: string) => void;
}

/** The thread a session belongs to, or none (tool discovery). */
export type LaunchScope = { thread: ThreadDirs } | { thread?: undefined };

/** A ready-to-spawn server process and how to read its answers. */
export interface StdioLaunch extends LaunchedProcessSpec {
  sandboxed: boolean;
  /** For path mapping of results (thread sessions only). */
  pathScope?: McpPathScope;
  /** Tool-call arguments as the server must see them (virtual paths → host paths when unsandboxed). */
  mapArgs: (args: Record<string, unknown>) => Record<string, unknown>;
}

const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Whether a server entry opted out of its sandbox (`"sandbox": false`, operator-edited files only). */
export function sandboxOptOut(config: McpServerConfig): boolean {
  return (config as Record<string, unknown>).sandbox === false;
}

const isVirtual = (p: string) => p === VIRTUAL_USER_DATA || p.startsWith(`${VIRTUAL_USER_DATA}/`);

/** An absolute host path named by an argument (`/x`, `--opt=/x`), when it exists on the host. */
function namedPath(arg: string): string | undefined {
  const candidate = arg.startsWith("/") ? arg : /^-[^=]*=\//.test(arg) ? arg.slice(arg.indexOf("=") + 1) : undefined;
  if (!candidate || isVirtual(candidate) || candidate.includes("\0")) return undefined;
  return existsSync(candidate) ? path.resolve(candidate) : undefined;
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function nearestPackageRoot(start: string): string | undefined {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (dir === path.dirname(dir)) return undefined;
  }
}

function binFiles(pkgDir: string): string[] {
  try {
    const pkg = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { bin?: unknown };
    const bins = typeof pkg.bin === "string" ? [pkg.bin] : pkg.bin && typeof pkg.bin === "object" ? Object.values(pkg.bin as Record<string, unknown>) : [];
    return bins
      .filter((b): b is string => typeof b === "string")
      .map((b) => path.resolve(pkgDir, b))
      .filter((f) => isWithin(f, pkgDir) && existsSync(f) && statSync(f).isFile());
  } catch {
    return [];
  }
}

/**
 * A writable copy of a package's bin file, bound over the read-only
 * original: when npx links a local package directory it chmods the
 * package's bin files, which fails on a read-only bind and stops the
 * launch. The copy is identical, owned by the uid the server runs as, and
 * lives in the session's own temp dir (fresh per session, removed with it),
 * so neither the host package nor a later session ever sees a change.
 */
function shadowCopy(sessionDir: string, file: string, index: number, owner: { uid: number; gid: number } | undefined): string {
  const target = path.join(sessionDir, `.deerflow-bin-${index}`);
  copyFileSync(file, target);
  chmodSync(target, 0o755);
  if (owner) chownSync(target, owner.uid, owner.gid);
  return target;
}

/** Refuse a host path the agent can write, or one that is (or contains) the data dir. */
function checkNamedPath(server: string, p: string, settings: McpLaunchSettings, what: string): void {
  const real = realOrSelf(p);
  const data = realOrSelf(path.resolve(settings.dataDir));
  const refuse = (why: string) => {
    throw new McpError(server, `MCP server '${server}' cannot start: its ${what} names ${p}, ${why}.`, { code: "mcp_config_invalid" });
  };
  for (const root of settings.agentWritable?.() ?? []) {
    if (isWithin(real, realOrSelf(root)) || isWithin(p, root)) refuse(`which the agent's sandbox can write (${root}); a server is only started from places the agent cannot change`);
  }
  if (isWithin(real, data)) refuse(`which is inside the data dir ${data}; a server is only started from places the agent cannot change`);
  if (isWithin(data, real)) refuse(`which contains the data dir ${data} (every thread's files); name a narrower path`);
}

/**
 * What a sandboxed server needs of its named host paths, all read-only:
 * each path, the package it belongs to (nearest `package.json`) unless that
 * contains the data dir, every `node_modules` beside one of its ancestors
 * (Node's module resolution), and writable copies of a local package's bin files.
 */
function namedBinds(server: string, named: string[], sessionDir: string, settings: McpLaunchSettings, owner: { uid: number; gid: number } | undefined): BwrapBind[] {
  const data = realOrSelf(path.resolve(settings.dataDir));
  const ro = new Set<string>();
  const shadows: BwrapBind[] = [];
  for (const p of named) {
    checkNamedPath(server, p, settings, "command or args");
    const real = realOrSelf(p);
    for (const x of new Set([p, real])) {
      ro.add(x);
      const isDir = statSync(x).isDirectory();
      const pkg = isDir && existsSync(path.join(x, "package.json")) ? x : nearestPackageRoot(path.dirname(x));
      if (pkg && !isWithin(data, pkg)) ro.add(pkg);
      for (let dir = path.dirname(x); ; dir = path.dirname(dir)) {
        const nm = path.join(dir, "node_modules");
        if (existsSync(nm) && !isWithin(data, nm)) ro.add(nm);
        if (dir === path.dirname(dir)) break;
      }
      if (isDir && pkg === x) for (const bin of binFiles(x)) shadows.push({ host: shadowCopy(sessionDir, bin, shadows.length, owner), dest: bin, readOnly: false });
    }
  }
  // /usr is bound already; a path inside another bound path needs no bind of its own.
  const sorted = [...ro].filter((p) => !isWithin(p, "/usr")).sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const p of sorted) if (!kept.some((k) => isWithin(p, k))) kept.push(p);
  return [...kept.map((p) => ({ host: p, dest: p, readOnly: true })), ...shadows];
}

/** A declared PATH must not lead into places the agent writes (its binaries would run with the server's secrets). */
function checkDeclaredPath(server: string, value: string | undefined, settings: McpLaunchSettings): void {
  if (!value) return;
  for (const entry of value.split(":").filter(Boolean)) {
    if (isVirtual(entry)) throw new McpError(server, `MCP server '${server}' cannot start: env.PATH names ${entry}, the thread's data, which the agent writes.`, { code: "mcp_config_invalid" });
    if (path.isAbsolute(entry) && existsSync(entry)) checkNamedPath(server, entry, settings, "env.PATH");
  }
}

/**
 * The launch directory must not lie below anything the agent can write:
 * launchers read files from every parent, and a sandboxed server's home
 * would be the agent's to plant in.
 */
function checkLaunchDirParents(server: string, dirs: McpServerDirs, settings: McpLaunchSettings): void {
  for (const root of settings.agentWritable?.() ?? []) {
    if (isWithin(dirs.root, root) || isWithin(realOrSelf(dirs.root), realOrSelf(root))) {
      throw new McpError(
        server,
        `MCP server '${server}' cannot start: its launch directory ${dirs.root} is inside ${root}, which the agent's sandbox can write (launchers such as npm read .npmrc and package.json from every parent directory); move the data dir or make that mount read-only.`,
        { code: "mcp_config_invalid" },
      );
    }
  }
}

/** The environment every server starts from: nothing inherited from the gateway. */
function baseEnv(home: string, cache: string, tmp: string, commandDir: string | undefined): Record<string, string> {
  return {
    PATH: commandDir && !SYSTEM_PATH.split(":").includes(commandDir) ? `${commandDir}:${SYSTEM_PATH}` : SYSTEM_PATH,
    HOME: home,
    TMPDIR: tmp,
    LANG: "C.UTF-8",
    XDG_CACHE_HOME: cache,
    XDG_CONFIG_HOME: path.posix.join(home, ".config"),
    XDG_DATA_HOME: path.posix.join(home, ".local", "share"),
    npm_config_cache: path.posix.join(cache, "npm"),
    npm_config_update_notifier: "false",
    UV_CACHE_DIR: path.posix.join(cache, "uv"),
  };
}

function hostPathOf(p: string, thread: { userData: string }): string {
  return p === VIRTUAL_USER_DATA ? thread.userData : path.join(thread.userData, p.slice(VIRTUAL_USER_DATA.length + 1));
}

/** Deep copy of tool-call arguments with `/mnt/user-data/...` strings turned into host paths. */
function mapVirtualArgs(value: unknown, thread: { userData: string }): unknown {
  if (typeof value === "string") return isVirtual(value) && !value.split("/").includes("..") ? hostPathOf(value, thread) : value;
  if (Array.isArray(value)) return value.map((v) => mapVirtualArgs(v, thread));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapVirtualArgs(v, thread)]));
  return value;
}

const warned = new Set<string>();

/**
 * Plan the start of one stdio server process: its own launch directory
 * under the data dir (never a thread dir, never the gateway's cwd), a clean
 * environment (the declared `env` over a minimal PATH/HOME/TMPDIR/LANG and
 * cache dirs inside the launch directory), and — when bubblewrap works and
 * the entry does not opt out — its own sandbox, where the thread's
 * user-data appears at `/mnt/user-data` exactly as the agent sees it.
 * @param env the declared `env`, `$VAR`s already resolved
 * @throws McpError `mcp_config_invalid` (a path the agent can write) or `mcp_start_failed`
 */
export async function planStdioLaunch(name: string, config: McpServerConfig, env: Record<string, string>, scope: LaunchScope, settings: McpLaunchSettings): Promise<StdioLaunch> {
  if (!config.command) throw new McpError(name, `MCP server '${name}' with stdio transport requires 'command'`, { code: "mcp_config_invalid" });
  const dirs = mcpServerDirs(settings.dataDir, name);
  const optOut = sandboxOptOut(config);
  const wanted = (settings.sandbox ?? "auto") === "auto" && !optOut;
  const probe = wanted ? probeBwrap({ runAs: settings.runAs, bwrapPath: settings.bwrapPath }) : undefined;
  const sandboxed = !!probe?.ok && !!probe.bwrapPath;
  const warnOnce = (key: string, message: string) => {
    if (warned.has(key)) return;
    warned.add(key);
    settings.warn?.(message);
  };
  if (optOut) warnOnce(`optout:${name}`, `MCP server '${name}' runs on the host without its bubblewrap sandbox ("sandbox": false in extensions_config.json): it can read and write everything the service user can.`);
  else if (wanted && !sandboxed) warnOnce(`nobwrap:${probe?.reason}`, `MCP: bubblewrap is not usable (${probe?.reason}); stdio MCP servers run unsandboxed, with a clean environment in their own launch directory.`);
  const owner = sandboxed ? settings.runAs : undefined;
  ensureMcpServerDirs(dirs, name, owner);

  const command = path.isAbsolute(config.command) ? config.command : findBinary(config.command, { envPath: process.env.PATH });
  if (!command || !existsSync(command)) {
    throw new McpError(name, `MCP server '${name}' failed to start: command '${config.command}' was not found on the PATH`, { code: "mcp_start_failed" });
  }
  checkDeclaredPath(name, env.PATH, settings);
  const named = [command, ...config.args.map(namedPath).filter((p): p is string => !!p)];
  const thread = scope.thread;
  // Thread dirs belong to the uid the sandboxes run as (as the bash sandbox makes them).
  if (thread) await ensureThreadDirs(thread, owner);
  const tmp = sessionTmpDir(dirs, owner);
  let cgroup: SandboxCgroup | undefined;
  let cgroupProcs: string[] | undefined;

  try {
    // Also when sandboxed: a writable mount over the launch directory would let the agent plant files in the server's home.
    checkLaunchDirParents(name, dirs, settings);
    if (!sandboxed) {
      for (const p of named) checkNamedPath(name, p, settings, "command or args");
      const userData = thread ?? dirs.scratch;
      const args = config.args.map((a) => (isVirtual(a) ? hostPathOf(a, userData) : a));
      return {
        sandboxed: false,
        argv: [command, ...args],
        env: { ...baseEnv(dirs.home, dirs.cache, tmp.dir, path.dirname(command)), ...env },
        cwd: dirs.root,
        onExit: tmp.remove,
        ...(thread ? { pathScope: { userDataDir: thread.userData, cwd: dirs.root } } : {}),
        mapArgs: thread ? (a) => mapVirtualArgs(a, thread) as Record<string, unknown> : (a) => a,
      };
    }
    const userData = thread ?? dirs.scratch;
    // A thread's sessions get that thread's own home and cache; only discovery sessions use the server's.
    const own = thread ? ensureThreadServerDirs(dirs, name, thread.userData, owner) : dirs;
    const binds: BwrapBind[] = [
      { host: dirs.root, dest: MCP_SANDBOX_ROOT, readOnly: true },
      { host: own.home, dest: MCP_SANDBOX_HOME, readOnly: false },
      { host: own.cache, dest: MCP_SANDBOX_CACHE, readOnly: false },
      { host: tmp.dir, dest: "/tmp", readOnly: false },
      { host: userData.workspace, dest: VIRTUAL_WORKSPACE, readOnly: false },
      { host: userData.uploads, dest: VIRTUAL_UPLOADS, readOnly: false },
      { host: userData.outputs, dest: VIRTUAL_OUTPUTS, readOnly: false },
      ...namedBinds(name, named, tmp.dir, settings, owner),
    ];
    const strategy = bindStrategy(settings.dataDir, settings.runAs, binds.map((b) => b.host));
    if (strategy.blocker && !strategy.stage) {
      throw new McpError(name, `MCP server '${name}' cannot be sandboxed: the sandbox uid cannot enter ${strategy.blocker} and unshare/mount are missing`, { code: "mcp_start_failed" });
    }
    const limits = settings.cgroup?.();
    if (limits) {
      const cg = new SandboxCgroup(limits.support, `mcp-${mcpServerDirName(name)}`, limits.limits);
      cgroupProcs = cg.ensure();
      cgroup = cg;
    }
    const launch = buildMcpSandboxLaunch({
      bwrapPath: probe.bwrapPath as string,
      sizedTmpfs: bwrapSupportsTmpSize(probe.bwrapPath as string),
      cgroupProcs,
      setprivPath: probe.setprivPath,
      runAs: settings.runAs,
      stage: strategy.stage,
      network: settings.network ?? true,
      binds,
      // Other sessions' temp dirs, other threads' homes and caches, the discovery scratch: not this session's to see.
      hidden: [path.posix.join(MCP_SANDBOX_ROOT, "tmp"), path.posix.join(MCP_SANDBOX_ROOT, MCP_THREAD_HOMES_DIR), path.posix.join(MCP_SANDBOX_ROOT, "scratch")],
      env: { ...baseEnv(MCP_SANDBOX_HOME, MCP_SANDBOX_CACHE, "/tmp", path.dirname(command)), ...env },
      cwd: MCP_SANDBOX_ROOT,
      command,
      args: config.args,
    });
    return {
      sandboxed: true,
      argv: launch.argv,
      fd3: launch.bwrapArgs,
      // The launcher chain itself needs nothing from the gateway's environment either.
      env: { PATH: "/usr/bin:/bin" },
      cwd: "/",
      onExit: () => {
        tmp.remove();
        // Whatever the server left running in its cgroup goes with the session.
        void cgroup?.destroy().catch(() => undefined);
      },
      ...(thread ? { pathScope: { userDataDir: thread.userData, cwd: MCP_SANDBOX_ROOT, serverUserData: VIRTUAL_USER_DATA } } : {}),
      mapArgs: (a) => a,
    };
  } catch (err) {
    tmp.remove();
    void cgroup?.destroy().catch(() => undefined);
    throw err;
  }
}
