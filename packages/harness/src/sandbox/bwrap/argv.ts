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
  network: boolean;
  env: Record<string, string>;
  /** Working directory inside the sandbox. */
  cwd: string;
  limits?: BwrapLimits;
  command: string;
  /**
   * Stage the bind sources in a private mount namespace before dropping
   * privileges (see `staging.ts`): set when the sandbox uid cannot enter a
   * directory above a source.
   */
  stage?: StageTools;
}

/** Read-only system paths a minimal root needs (bound when present). */
const SYSTEM_RO = ["/etc/ld.so.cache", "/etc/alternatives"];
/** Extra read-only paths when networking is enabled (DNS, TLS roots). */
const NETWORK_RO = ["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates"];

/**
 * The bubblewrap profile of `reference/sandbox-isolation.md`: minimal
 * read-only root (`/usr` + symlinks), fresh /proc, /dev, /tmp, only the given
 * binds, new user/pid/ipc/uts/cgroup (and net) namespaces, nested user
 * namespaces disabled, cleared environment, all capabilities dropped, killed
 * with its parent.
 */
export function bwrapArgs(spec: Pick<BwrapCommandSpec, "binds" | "network" | "env" | "cwd" | "command">): string[] {
  const a: string[] = [
    "--unshare-user",
    "--disable-userns",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  if (!spec.network) a.push("--unshare-net");
  a.push("--die-with-parent", "--new-session", "--hostname", "sandbox");
  a.push("--ro-bind", "/usr", "/usr");
  a.push("--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/sbin", "/sbin");
  if (existsSync("/usr/lib64")) a.push("--symlink", "usr/lib64", "/lib64");
  if (existsSync("/usr/lib32")) a.push("--symlink", "usr/lib32", "/lib32");
  for (const p of spec.network ? [...SYSTEM_RO, ...NETWORK_RO] : SYSTEM_RO) a.push("--ro-bind-try", p, p);
  a.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  for (const b of spec.binds) {
    const flag = b.readOnly ? (b.optional ? "--ro-bind-try" : "--ro-bind") : b.optional ? "--bind-try" : "--bind";
    a.push(flag, b.host, b.dest);
  }
  a.push("--chdir", spec.cwd, "--clearenv");
  for (const [k, v] of Object.entries(spec.env)) a.push("--setenv", k, v);
  a.push("--cap-drop", "ALL", "--", "/bin/sh", "-c", spec.command);
  return a;
}

/** Full argv: `[prlimit …] [unshare … sh -c STAGE …] [setpriv …] bwrap …`. */
export function buildBwrapCommand(spec: BwrapCommandSpec): string[] {
  const argv: string[] = [];
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
  if (spec.stage) {
    // A missing optional source cannot be staged; bwrap would have skipped it anyway.
    const present = binds.filter((b) => !b.optional || existsSync(b.host));
    // Without a uid drop nothing is closed to bwrap; the identity only matters with runAs.
    const plan = planStaging(present, spec.runAs ?? { uid: 0, gid: 0 });
    argv.push(...stagePrefix(spec.stage, plan.hosts));
    binds = plan.binds;
  }
  if (spec.runAs) {
    if (!spec.setprivPath) throw new Error("setpriv is required to drop privileges");
    argv.push(spec.setprivPath, `--reuid=${spec.runAs.uid}`, `--regid=${spec.runAs.gid}`, "--clear-groups", "--");
  }
  argv.push(spec.bwrapPath, ...bwrapArgs({ ...spec, binds }));
  return argv;
}
