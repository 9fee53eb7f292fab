import { existsSync } from "node:fs";
import { planStaging, stagePrefix } from "./staging";
import type { StageTools } from "./staging";

/** One bind mount into the sandbox. */
export interface BwrapBind {
  host: string;
  dest: string;
  readOnly: boolean;
  /** Skip silently when the host path is missing (`--bind-try`). */
  optional?: boolean;
}

/** prlimit values (0 = not applied). */
export interface BwrapLimits {
  cpuSeconds: number;
  fileSizeBytes: number;
  openFiles: number;
  processes: number;
  addressSpaceBytes: number;
}

/** Everything needed to build one sandboxed command line. */
export interface BwrapCommandSpec {
  bwrapPath: string;
  /** `prlimit` binary; limits are skipped when absent. */
  prlimitPath?: string;
  /** `setpriv` binary; required when `runAs` is set. */
  setprivPath?: string;
  /** Drop to this uid/gid before starting bwrap (service running as root). */
  runAs?: { uid: number; gid: number };
  binds: BwrapBind[];
  /** A network-mode command (TLS roots bound); the sandbox keeps its own network namespace either way. */
  network: boolean;
  env: Record<string, string>;
  /** Working directory inside the sandbox. */
  cwd: string;
  limits?: BwrapLimits;
  /**
   * `cgroup.procs` files of the sandbox's cgroups: the chain's first process
   * (still with the service's privileges, before anything forks) writes its own pid into each, then
   * execs the rest, so every process of the command is born inside them.
   */
  cgroupProcs?: readonly string[];
  /** Size of the sandbox's `/tmp` tmpfs in bytes (`--size`; 0/absent = tmpfs default). */
  tmpSizeBytes?: number;
  command: string;
  /**
   * Stage the bind sources in a private mount namespace before dropping
   * privileges (see `staging.ts`): set when the sandbox uid cannot enter a
   * directory above a source.
   */
  stage?: StageTools;
}

/** Upper bound of the sandbox's `/dev/shm` (as a container runtime's default); never above `tmp_size_bytes`. */
export const DEV_SHM_MAX_BYTES = 64 * 1024 * 1024;

/** Read-only system paths a minimal root needs (bound when present). */
const SYSTEM_RO = ["/etc/ld.so.cache", "/etc/alternatives"];
/** Extra read-only paths in network modes: TLS roots and `localhost` (no resolv.conf: the egress proxy resolves names). */
const NETWORK_RO = ["/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates"];

/**
 * The bubblewrap profile (docs/sandbox.md): minimal
 * read-only root (`/usr` + symlinks), fresh /proc, /dev, /tmp, only the given
 * binds, new user/pid/ipc/uts/cgroup (and net) namespaces, nested user
 * namespaces disabled, cleared environment, all capabilities dropped, killed
 * with its parent.
 */
export function bwrapArgs(spec: Pick<BwrapCommandSpec, "binds" | "network" | "env" | "cwd" | "command" | "tmpSizeBytes">): string[] {
  const { options, command } = bwrapArgParts(spec);
  return [...options, ...command];
}

/**
 * {@link bwrapArgs} split into bwrap's options (host bind sources among
 * them) and the command tail (`-- /bin/sh -c COMMAND`), so the options can
 * be handed over through `--args FD` instead of bwrap's argv.
 */
export function bwrapArgParts(spec: Pick<BwrapCommandSpec, "binds" | "network" | "env" | "cwd" | "command" | "tmpSizeBytes">): { options: string[]; command: string[] } {
  const a: string[] = [
    "--unshare-user",
    "--disable-userns",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  // Always a network namespace of its own (loopback only): in network modes the egress proxy's socket is the only way out.
  a.push("--unshare-net");
  a.push("--die-with-parent", "--new-session", "--hostname", "sandbox");
  a.push("--ro-bind", "/usr", "/usr");
  a.push("--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/sbin", "/sbin");
  if (existsSync("/usr/lib64")) a.push("--symlink", "usr/lib64", "/lib64");
  if (existsSync("/usr/lib32")) a.push("--symlink", "usr/lib32", "/lib32");
  for (const p of spec.network ? [...SYSTEM_RO, ...NETWORK_RO] : SYSTEM_RO) a.push("--ro-bind-try", p, p);
  a.push("--proc", "/proc", "--dev", "/dev");
  // bwrap's /dev is a tmpfs owned by the sandbox uid and as large as half the RAM, a second /tmp outside
  // tmp_size_bytes: /dev/shm gets its own bounded tmpfs and /dev itself is made read-only (device nodes stay usable).
  if (spec.tmpSizeBytes && spec.tmpSizeBytes > 0) a.push("--size", String(Math.min(spec.tmpSizeBytes, DEV_SHM_MAX_BYTES)));
  a.push("--tmpfs", "/dev/shm", "--remount-ro", "/dev");
  if (spec.tmpSizeBytes && spec.tmpSizeBytes > 0) a.push("--size", String(spec.tmpSizeBytes));
  a.push("--tmpfs", "/tmp");
  for (const b of spec.binds) {
    const flag = b.readOnly ? (b.optional ? "--ro-bind-try" : "--ro-bind") : b.optional ? "--bind-try" : "--bind";
    a.push(flag, b.host, b.dest);
  }
  a.push("--chdir", spec.cwd, "--clearenv");
  for (const [k, v] of Object.entries(spec.env)) a.push("--setenv", k, v);
  a.push("--cap-drop", "ALL");
  return { options: a, command: ["--", "/bin/sh", "-c", spec.command] };
}

/** Full argv: `[sh -c JOIN-CGROUPS …] [prlimit …] [unshare … sh -c STAGE …] [setpriv …] bwrap …`. */
export function buildBwrapCommand(spec: BwrapCommandSpec): string[] {
  const { prefix, parts } = chainParts(spec);
  return [...prefix, spec.bwrapPath, ...parts.options, ...parts.command];
}

/** The fd bwrap reads its options from in {@link buildBwrapInvocation}. */
export const BWRAP_ARGS_FD = 3;

/**
 * Like {@link buildBwrapCommand}, but bwrap's options travel NUL-separated
 * through fd {@link BWRAP_ARGS_FD} (`--args`): bwrap's argv — readable inside
 * the sandbox as `/proc/1/cmdline`, since the sandbox's pid 1 is bwrap's own
 * init — then holds no host path. The caller writes `argsData` to that fd.
 */
export function buildBwrapInvocation(spec: BwrapCommandSpec): { argv: string[]; argsData: Buffer } {
  const { prefix, parts } = chainParts(spec);
  const argsData = Buffer.from(parts.options.map((o) => `${o}\0`).join(""), "utf8");
  return { argv: [...prefix, spec.bwrapPath, "--args", String(BWRAP_ARGS_FD), ...parts.command], argsData };
}

/**
 * Joins the cgroups before the uid drop, then execs the rest. The files are positional
 * arguments, never spliced into the script; a failed write stops the command
 * (exit 125) rather than running it unconfined.
 */
const JOIN_CGROUPS_SCRIPT = [
  "n=$1; shift",
  'while [ "$n" -gt 0 ]; do',
  '  echo $$ > "$1" || { echo "deerflow: cannot join sandbox cgroup $1" >&2; exit 125; }',
  "  shift; n=$((n - 1))",
  "done",
  'exec "$@"',
].join("\n");

/**
 * The argv prefix that joins the `cgroup.procs` files (with the service's privileges) and then execs
 * the rest of the chain; empty without files. Shared by the bash sandbox and sandboxed MCP servers.
 */
export function cgroupJoinPrefix(cgroupProcs: readonly string[] | undefined): string[] {
  return cgroupProcs?.length ? ["/bin/sh", "-c", JOIN_CGROUPS_SCRIPT, "deerflow-cgroup", String(cgroupProcs.length), ...cgroupProcs] : [];
}

function chainParts(spec: BwrapCommandSpec): { prefix: string[]; parts: { options: string[]; command: string[] } } {
  const argv: string[] = cgroupJoinPrefix(spec.cgroupProcs);
  let binds = spec.binds;
  if (spec.prlimitPath && spec.limits) {
    const l = spec.limits;
    const flags: string[] = [];
    if (l.cpuSeconds > 0) flags.push(`--cpu=${l.cpuSeconds}`);
    if (l.fileSizeBytes > 0) flags.push(`--fsize=${l.fileSizeBytes}`);
    if (l.openFiles > 0) flags.push(`--nofile=${l.openFiles}`);
    if (l.addressSpaceBytes > 0) flags.push(`--as=${l.addressSpaceBytes}`);
    // RLIMIT_NPROC counts per real uid and is not enforced for root: only with a dropped uid.
    if (l.processes > 0 && spec.runAs) flags.push(`--nproc=${l.processes}`);
    if (flags.length) argv.push(spec.prlimitPath, ...flags, "--");
  }
  const drop = stageAndDropPrefix(spec);
  argv.push(...drop.prefix);
  return { prefix: argv, parts: bwrapArgParts({ ...spec, binds: drop.binds }) };
}

/**
 * The part of a chain that runs with the service's privileges just before
 * bwrap: staging of the bind sources in a private mount namespace (when a
 * directory above them is closed to the sandbox uid) and the uid drop. Returns
 * that argv prefix and the binds as bwrap must then name them. Shared by the
 * bash sandbox and sandboxed MCP servers.
 */
export function stageAndDropPrefix(spec: Pick<BwrapCommandSpec, "binds" | "stage" | "runAs" | "setprivPath">): { prefix: string[]; binds: BwrapBind[] } {
  const prefix: string[] = [];
  let binds = spec.binds;
  if (spec.stage) {
    // A missing optional source cannot be staged; bwrap would have skipped it anyway.
    const present = binds.filter((b) => !b.optional || existsSync(b.host));
    // Without a uid drop nothing is closed to bwrap; the identity only matters with runAs.
    const plan = planStaging(present, spec.runAs ?? { uid: 0, gid: 0 });
    prefix.push(...stagePrefix(spec.stage, plan.hosts));
    binds = plan.binds;
  }
  if (spec.runAs) {
    if (!spec.setprivPath) throw new Error("setpriv is required to drop privileges");
    prefix.push(spec.setprivPath, `--reuid=${spec.runAs.uid}`, `--regid=${spec.runAs.gid}`, "--clear-groups", "--");
  }
  return { prefix, binds };
}
