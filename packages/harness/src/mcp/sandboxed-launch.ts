import { existsSync } from "node:fs";
import type { BwrapBind, StageTools } from "../sandbox";
import { cgroupJoinPrefix, DEV_SHM_MAX_BYTES, stageAndDropPrefix } from "../sandbox/bwrap/argv";

/** Where a sandboxed server sees its own launch directory (its cwd; read-only except `home`). */
export const MCP_SANDBOX_ROOT = "/mnt/mcp-server";
/** The server's writable home inside its sandbox. */
export const MCP_SANDBOX_HOME = `${MCP_SANDBOX_ROOT}/home`;
/** The server's persistent cache inside its sandbox (npm, uv, XDG). */
export const MCP_SANDBOX_CACHE = `${MCP_SANDBOX_ROOT}/cache`;

/** Read-only system files a networked server needs besides `/usr`: loader cache, DNS, TLS roots. */
const SYSTEM_FILES = [
  "/etc/ld.so.cache",
  "/etc/alternatives",
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
  "/etc/localtime",
];

/** Everything needed to start one server in its own bubblewrap sandbox. */
export interface McpSandboxSpec {
  bwrapPath: string;
  /** `cgroup.procs` files the chain joins first (the session's own cgroup: pids, memory, CPU). */
  cgroupProcs?: readonly string[];
  setprivPath?: string;
  /** Drop to this uid/gid before bwrap (service running as root). */
  runAs?: { uid: number; gid: number };
  /** Stage bind sources first (a directory above them is closed to `runAs`). */
  stage?: StageTools;
  /** This bwrap knows `--size` (≥ 0.8): `/dev/shm` is then bounded. */
  sizedTmpfs?: boolean;
  /** Share the host network namespace (many servers call remote APIs). */
  network: boolean;
  binds: BwrapBind[];
  /**
   * Sandbox paths covered by an empty read-only tmpfs after the binds: the
   * parts of the launch directory that belong to other sessions and threads
   * (their temp dirs, homes and caches), which the read-only bind of the
   * launch directory would otherwise show.
   */
  hidden?: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** Absolute path of the executable inside the sandbox, then its arguments. */
  command: string;
  args: readonly string[];
}

/** What to spawn on the host: the launcher chain, and bubblewrap's own arguments, handed over on fd 3. */
export interface McpSandboxLaunch {
  argv: string[];
  /** NUL-separated bwrap options for `--args 3`. */
  bwrapArgs: Buffer;
}

/**
 * The bubblewrap profile of a stdio MCP server: `/usr` and a few `/etc`
 * files read-only, fresh `/proc` and `/dev`, only the given binds, new
 * user/pid/ipc/uts/cgroup namespaces (nested user namespaces disabled),
 * the host network unless `network` is false, cleared environment, no
 * capabilities, killed with its parent.
 */
export function mcpBwrapOptions(spec: Pick<McpSandboxSpec, "binds" | "hidden" | "network" | "env" | "cwd" | "sizedTmpfs">): string[] {
  const a = ["--unshare-user", "--disable-userns", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"];
  if (!spec.network) a.push("--unshare-net");
  a.push("--die-with-parent", "--new-session", "--hostname", "mcp-server");
  a.push("--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/sbin", "/sbin");
  if (existsSync("/usr/lib64")) a.push("--symlink", "usr/lib64", "/lib64");
  if (existsSync("/usr/lib32")) a.push("--symlink", "usr/lib32", "/lib32");
  for (const p of SYSTEM_FILES) a.push("--ro-bind-try", p, p);
  // bwrap's /dev is a tmpfs the server's uid owns, as large as half the RAM: read-only, with a bounded /dev/shm.
  a.push("--proc", "/proc", "--dev", "/dev");
  if (spec.sizedTmpfs) a.push("--size", String(DEV_SHM_MAX_BYTES));
  a.push("--tmpfs", "/dev/shm", "--remount-ro", "/dev");
  for (const b of spec.binds) {
    const flag = b.readOnly ? (b.optional ? "--ro-bind-try" : "--ro-bind") : b.optional ? "--bind-try" : "--bind";
    a.push(flag, b.host, b.dest);
  }
  for (const p of spec.hidden ?? []) a.push("--tmpfs", p, "--remount-ro", p);
  a.push("--chdir", spec.cwd, "--clearenv");
  for (const [k, v] of Object.entries(spec.env)) a.push("--setenv", k, v);
  a.push("--cap-drop", "ALL");
  return a;
}

/**
 * The host-side argv `[unshare … stage …] [setpriv …] bwrap --args 3 -- COMMAND ARGS…`
 * and the bwrap options to write to fd 3. Passing the options on a pipe
 * keeps bind sources (host paths) and environment values (the server's
 * secrets) off every command line: the sandbox's pid 1 is bwrap itself, and
 * its `/proc/1/cmdline` shows only the server's own command and args.
 */
export function buildMcpSandboxLaunch(spec: McpSandboxSpec): McpSandboxLaunch {
  const drop = stageAndDropPrefix(spec);
  const argv = [...cgroupJoinPrefix(spec.cgroupProcs), ...drop.prefix, spec.bwrapPath, "--args", "3", "--", spec.command, ...spec.args];
  const options = mcpBwrapOptions({ ...spec, binds: drop.binds });
  return { argv, bwrapArgs: Buffer.from(options.map((x) => `${x}\0`).join(""), "utf8") };
}
