import { createHash } from "node:crypto";
import path from "node:path";
import type { ContainerCreateOptions } from "dockerode";
import { ConfigError } from "../../errors";
import type { SandboxConfig, SandboxMount } from "../../config/sandbox-config";
import { DEV_SHM_MAX_BYTES } from "../bwrap/argv";
import { VIRTUAL_OUTPUTS, VIRTUAL_SKILLS, VIRTUAL_UPLOADS, VIRTUAL_USER_DATA, VIRTUAL_WORKSPACE } from "../thread-paths";

/** Labels every container of ours carries (the value of {@link LABELS.managedBy} is always `deerflow`). */
export const LABELS = {
  managedBy: "deerflow.managed-by",
  /** `thread` (one user+thread) or `pool` (pre-created, not yet handed to a thread). */
  role: "deerflow.sandbox.role",
  user: "deerflow.sandbox.user",
  thread: "deerflow.sandbox.thread",
  /** Random id of the provider instance that created it. */
  instance: "deerflow.sandbox.instance",
  /** Host name, pid and pid start time of that process: an orphan is one whose process is gone. */
  host: "deerflow.sandbox.host",
  pid: "deerflow.sandbox.pid",
  pidStart: "deerflow.sandbox.pid-start",
} as const;

/** Value of {@link LABELS.managedBy}. */
export const MANAGED_BY = "deerflow";

/** Default container name prefix (DeerFlow's). */
export const DEFAULT_CONTAINER_PREFIX = "deer-flow-sandbox";

/**
 * The keep-alive process (pid 1): POSIX sh only, so the image needs no
 * entrypoint, server or `USER`. `sleep` in the background plus `wait` keeps
 * the shell able to act on SIGTERM at once (a foreground sleep would delay it
 * up to an hour). The image needs `/bin/sh` and `sleep` (busybox has both).
 */
export const KEEPALIVE_CMD = ["/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"];

/** Deterministic container id of a (user, thread): 16 hex chars of sha256("user:thread"), as DeerFlow derives it. */
export function containerIdFor(userId: string, threadId: string): string {
  return createHash("sha256").update(`${userId}:${threadId}`).digest("hex").slice(0, 16);
}

/** `{container_prefix}-{id}`. */
export function containerName(prefix: string, id: string): string {
  return `${prefix}-${id}`;
}

/** The process that owns a container (written into its labels). */
export interface OwnerIdentity {
  instanceId: string;
  hostname: string;
  pid: number;
  /** Start time of `pid` (clock ticks since boot, from /proc/pid/stat), to tell a reused pid apart. */
  pidStart: string;
}

/** Host directories bound into the container. */
export interface ContainerDirs {
  workspace: string;
  uploads: string;
  outputs: string;
  /** Host skills directory (bound read-only), if any. */
  skills?: string;
  skillsContainerPath?: string;
}

/** Inputs of {@link buildContainerSpec}. */
export interface ContainerSpecInput {
  config: SandboxConfig;
  /** `sandbox.image`. */
  image: string;
  name: string;
  /** `thread` (with user/thread ids) or `pool`. */
  role: "thread" | "pool";
  userId?: string;
  threadId?: string;
  dirs: ContainerDirs;
  /** uid/gid every process runs as (never 0). */
  runAs: { uid: number; gid: number };
  owner: OwnerIdentity;
  /** Host path of the Docker socket, refused as a mount source (default /var/run/docker.sock). */
  dockerSocketPath?: string;
}

/** Container paths a custom mount may not take (the thread dirs, the skills root, kernel filesystems, the root). */
const RESERVED_CONTAINER_PATHS = [VIRTUAL_USER_DATA, "/proc", "/sys", "/dev", "/tmp"];

function isInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith("/") ? parent : `${parent}/`);
}

/**
 * Check the custom mounts as the bubblewrap tier does (absolute host paths,
 * absolute container paths without `..`), plus what only matters with a
 * daemon: no mount may expose the Docker socket (a mount of it or of a
 * directory holding it would hand the sandbox the daemon), or shadow the thread
 * dirs, the skills root or a kernel filesystem.
 * @throws ConfigError naming the offending `sandbox.mounts[i]` key.
 */
export function validateMounts(mounts: readonly SandboxMount[], options: { skillsContainerPath?: string; dockerSocketPath?: string } = {}): void {
  const socket = path.resolve(options.dockerSocketPath ?? "/var/run/docker.sock");
  const socketAliases = [socket, socket.replace(/^\/var\/run\//, "/run/")];
  const reserved = [...RESERVED_CONTAINER_PATHS, options.skillsContainerPath ?? VIRTUAL_SKILLS];
  mounts.forEach((m, i) => {
    const key = `sandbox.mounts[${i}]`;
    if (!path.isAbsolute(m.host_path)) throw new ConfigError(`${key}.host_path must be an absolute host path, got ${JSON.stringify(m.host_path)}`, { code: "sandbox_config_invalid", details: { key } });
    const host = path.resolve(m.host_path);
    if (socketAliases.some((s) => isInside(s, host))) {
      throw new ConfigError(`${key}.host_path ${host} contains the Docker socket; the sandbox is never given the Docker daemon`, { code: "sandbox_config_invalid", details: { key } });
    }
    const dest = path.posix.normalize(m.container_path);
    if (dest === "/" || reserved.some((r) => isInside(dest, r) || isInside(r, dest))) {
      throw new ConfigError(`${key}.container_path ${dest} overlaps a path the sandbox reserves (${reserved.join(", ")})`, { code: "sandbox_config_invalid", details: { key } });
    }
  });
}

/**
 * The container create options of one sandbox, hardened: an unprivileged
 * uid/gid, all capabilities dropped, `no-new-privileges`, Docker's default
 * seccomp profile (no `seccomp=unconfined`), a read-only root with a bounded
 * tmpfs `/tmp`, pids / memory / CPU / rlimits from `sandbox.limits`, no network
 * (`NetworkMode: none`), only the thread dirs, the skills (read-only) and the
 * validated custom mounts bound, labels naming its owner, and the keep-alive
 * command — never the Docker socket. Pure: no I/O; custom mounts whose host
 * path is missing are expected to be filtered out by the caller (as bwrap's
 * `--bind-try`).
 */
export function buildContainerSpec(input: ContainerSpecInput): ContainerCreateOptions {
  const { config, dirs, runAs, owner } = input;
  if (runAs.uid === 0) throw new ConfigError("The Docker sandbox never runs commands as root (sandbox.run_as_uid must not be 0)", { code: "sandbox_config_invalid" });
  validateMounts(config.mounts, { skillsContainerPath: dirs.skillsContainerPath, dockerSocketPath: input.dockerSocketPath });
  const limits = config.limits;
  const binds: string[] = [
    `${dirs.workspace}:${VIRTUAL_WORKSPACE}:rw`,
    `${dirs.uploads}:${VIRTUAL_UPLOADS}:rw`,
    `${dirs.outputs}:${VIRTUAL_OUTPUTS}:rw`,
  ];
  if (dirs.skills) binds.push(`${dirs.skills}:${dirs.skillsContainerPath ?? VIRTUAL_SKILLS}:ro`);
  for (const m of config.mounts) binds.push(`${path.resolve(m.host_path)}:${path.posix.normalize(m.container_path)}:${m.read_only ? "ro" : "rw"}`);

  const ulimits: { Name: string; Soft: number; Hard: number }[] = [];
  if (limits.open_files > 0) ulimits.push({ Name: "nofile", Soft: limits.open_files, Hard: limits.open_files });
  if (limits.file_size_bytes > 0) ulimits.push({ Name: "fsize", Soft: limits.file_size_bytes, Hard: limits.file_size_bytes });
  if (limits.cpu_seconds > 0) ulimits.push({ Name: "cpu", Soft: limits.cpu_seconds, Hard: limits.cpu_seconds });
  if (limits.address_space_bytes > 0) ulimits.push({ Name: "as", Soft: limits.address_space_bytes, Hard: limits.address_space_bytes });

  const labels: Record<string, string> = {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.role]: input.role,
    [LABELS.instance]: owner.instanceId,
    [LABELS.host]: owner.hostname,
    [LABELS.pid]: String(owner.pid),
    [LABELS.pidStart]: owner.pidStart,
  };
  if (input.userId) labels[LABELS.user] = input.userId;
  if (input.threadId) labels[LABELS.thread] = input.threadId;

  return {
    name: input.name,
    Image: input.image,
    Cmd: KEEPALIVE_CMD,
    // The image's own entrypoint (if any) must not wrap the keep-alive loop.
    Entrypoint: [],
    User: `${runAs.uid}:${runAs.gid}`,
    WorkingDir: VIRTUAL_WORKSPACE,
    Env: sandboxEnv(config.environment),
    Labels: labels,
    Hostname: "sandbox",
    NetworkDisabled: false,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      Binds: binds,
      NetworkMode: "none",
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      ReadonlyRootfs: true,
      // Docker copies the image's /tmp (contents and mode, normally 1777) onto the tmpfs; `exec` as in the bwrap tier's /tmp.
      Tmpfs: { "/tmp": ["rw", "exec", "nosuid", "nodev", ...(limits.tmp_size_bytes > 0 ? [`size=${limits.tmp_size_bytes}`] : [])].join(",") },
      ShmSize: limits.tmp_size_bytes > 0 ? Math.min(limits.tmp_size_bytes, DEV_SHM_MAX_BYTES) : DEV_SHM_MAX_BYTES,
      PidsLimit: limits.processes > 0 ? limits.processes : undefined,
      Memory: limits.memory_bytes > 0 ? limits.memory_bytes : undefined,
      // RAM + swap equal to RAM: no swap on top of the memory limit.
      MemorySwap: limits.memory_bytes > 0 ? limits.memory_bytes : undefined,
      NanoCpus: limits.cpu_cores > 0 ? Math.round(limits.cpu_cores * 1e9) : undefined,
      Ulimits: ulimits,
      Privileged: false,
      IpcMode: "private",
      // Restarting is the provider's job (it recreates a dead container on the next command).
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
      Init: false,
      LogConfig: { Type: "none", Config: {} },
    },
  };
}

/** Commands' base environment: the configured variables, then the fixed ones bwrap also sets (they win). */
export function sandboxEnv(environment: Record<string, string>, extra: Record<string, string> = {}): string[] {
  const env: Record<string, string> = {
    ...environment,
    ...extra,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: VIRTUAL_WORKSPACE,
    LANG: "C.UTF-8",
    TMPDIR: "/tmp",
  };
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}
