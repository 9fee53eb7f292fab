import { spawnSync } from "node:child_process";
import type { SandboxConfig } from "../../config/sandbox-config";
import type { BwrapLimits } from "../bwrap/argv";
import { findBinary } from "../bwrap/find-binary";
import { detectCgroups } from "./cgroups";
import type { CgroupLimits, CgroupSupport } from "./cgroups";

const tmpSizeSupport = new Map<string, boolean>();

/** Whether this bwrap takes `--size` for `--tmpfs` (bubblewrap ≥ 0.8; read from its `--help`, cached). */
export function bwrapSupportsTmpSize(bwrapPath: string): boolean {
  let ok = tmpSizeSupport.get(bwrapPath);
  if (ok === undefined) {
    const r = spawnSync(bwrapPath, ["--help"], { cwd: "/", encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "pipe"] });
    ok = /^\s*--size\b/m.test(`${r.stdout ?? ""}${r.stderr ?? ""}`);
    tmpSizeSupport.set(bwrapPath, ok);
  }
  return ok;
}

/** How one limit is enforced. */
export interface LimitEnforcement {
  /** Configured value (bytes, count, cores or seconds; 0 = off). */
  value: number;
  /** `cgroup-v2`, `cgroup-v1`, `rlimit`, `tmpfs`, `measured` or `none`. */
  mechanism: "cgroup-v2" | "cgroup-v1" | "rlimit" | "tmpfs" | "measured" | "none";
  /** One line for humans (doctor). */
  detail: string;
}

/** What the sandbox limits are and how each is enforced on this machine (see {@link describeSandboxLimits}). */
export interface SandboxLimitsReport {
  /** `cgroup-v2`, `cgroup-v1` (per-sandbox cgroups) or `rlimit` (per-process limits only). */
  mechanism: "cgroup-v2" | "cgroup-v1" | "rlimit";
  processes: LimitEnforcement;
  memory: LimitEnforcement;
  cpu: LimitEnforcement;
  tmp: LimitEnforcement;
  diskQuota: LimitEnforcement;
  /** Per-process rlimits applied in every mode. */
  rlimits: { cpu_seconds: number; file_size_bytes: number; open_files: number; address_space_bytes: number };
  /** Host directories the per-sandbox cgroups are created under. */
  cgroupParents: CgroupSupport["parents"];
  /** Why cgroups (or some controllers) are not used, and other caveats. */
  notes: string[];
}

/** Everything a bwrap sandbox needs to apply the limits. */
export interface EffectiveLimits {
  /** Per-sandbox cgroups to create, when any controller is usable. */
  cgroup?: { support: CgroupSupport; limits: CgroupLimits };
  /** prlimit values for the command chain. */
  rlimits: BwrapLimits;
  /** `--size` of `/tmp` (undefined when unsupported or 0). */
  tmpSizeBytes?: number;
  diskQuotaBytes: number;
  report: SandboxLimitsReport;
}

/** Options of {@link resolveSandboxLimits}. */
export interface ResolveLimitsOptions {
  /** The uid drop of the sandbox (RLIMIT_NPROC only counts with one). */
  runAs?: { uid: number; gid: number };
  bwrapPath?: string;
  /** Override cgroup detection (tests). */
  cgroups?: CgroupSupport;
  /** Whether prlimit is available (default: looked up on PATH). */
  prlimitAvailable?: boolean;
}

/**
 * Decide how each limit of `sandbox.limits` is enforced here: per-sandbox
 * cgroups for processes/memory/CPU when available, else rlimits (RLIMIT_NPROC
 * for processes — shared by all sandboxes of the uid —, RLIMIT_AS for memory,
 * nothing for a CPU share); `/tmp` by tmpfs size; disk by measurement.
 */
export function resolveSandboxLimits(config: SandboxConfig, options: ResolveLimitsOptions = {}): EffectiveLimits {
  const l = config.limits;
  const cg = options.cgroups ?? detectCgroups();
  const v = cg.version === 2 ? "cgroup-v2" : "cgroup-v1";
  const notes = [...cg.notes];
  const hasPrlimit = options.prlimitAvailable ?? findBinary("prlimit") !== undefined;
  if (!hasPrlimit) notes.push("prlimit is not installed: no per-process rlimits (cpu_seconds, file_size_bytes, open_files, and the fallbacks) are applied");
  const pidsCg = Boolean(cg.parents.pids);
  const memCg = Boolean(cg.parents.memory);
  const cpuCg = Boolean(cg.parents.cpu);

  const processes: LimitEnforcement = pidsCg
    ? { value: l.processes, mechanism: v, detail: `pids.max=${l.processes || "max"} per sandbox` }
    : options.runAs && l.processes > 0 && hasPrlimit
      ? { value: l.processes, mechanism: "rlimit", detail: `RLIMIT_NPROC=${l.processes} for uid ${options.runAs.uid}, shared by all sandboxes (a fork flood in one thread can starve the others)` }
      : { value: l.processes, mechanism: "none", detail: "not limited (no pids cgroup; RLIMIT_NPROC needs a dropped uid)" };
  const asBytes = l.address_space_bytes > 0 ? l.address_space_bytes : memCg ? 0 : l.memory_bytes;
  const memory: LimitEnforcement = memCg
    ? { value: l.memory_bytes, mechanism: v, detail: l.memory_bytes > 0 ? `${l.memory_bytes} bytes of RAM+swap per sandbox, /tmp included` : "not limited (memory_bytes: 0)" }
    : asBytes > 0 && hasPrlimit
      ? { value: l.memory_bytes, mechanism: "rlimit", detail: `RLIMIT_AS=${asBytes} per process (address space, not a per-sandbox total)` }
      : { value: 0, mechanism: "none", detail: "not limited" };
  const cpu: LimitEnforcement =
    cpuCg && l.cpu_cores > 0
      ? { value: l.cpu_cores, mechanism: v, detail: `${l.cpu_cores} CPU core(s) per sandbox (CFS quota)` }
      : { value: l.cpu_cores, mechanism: "none", detail: `no per-sandbox CPU share${l.cpu_cores > 0 ? " (no cpu cgroup)" : ""}; RLIMIT_CPU=${l.cpu_seconds}s per process` };

  const bwrapPath = options.bwrapPath ?? findBinary("bwrap");
  const sizeOk = bwrapPath ? bwrapSupportsTmpSize(bwrapPath) : false;
  const tmpSizeBytes = sizeOk && l.tmp_size_bytes > 0 ? l.tmp_size_bytes : undefined;
  const tmp: LimitEnforcement = tmpSizeBytes
    ? { value: l.tmp_size_bytes, mechanism: "tmpfs", detail: `tmpfs size=${tmpSizeBytes}` }
    : { value: l.tmp_size_bytes, mechanism: "none", detail: `tmpfs of the kernel's default size${sizeOk ? "" : " (this bwrap has no --size)"}${memCg ? ", bounded by the memory cgroup" : ""}` };
  if (!sizeOk && l.tmp_size_bytes > 0) notes.push("bwrap has no --size (bubblewrap < 0.8): /tmp is not size-limited");

  const diskQuota: LimitEnforcement =
    l.disk_quota_bytes > 0
      ? { value: l.disk_quota_bytes, mechanism: "measured", detail: `${l.disk_quota_bytes} bytes per thread (workspace+uploads+outputs), checked on host-side writes, polled during commands, measured after them` }
      : { value: 0, mechanism: "none", detail: "no disk quota" };

  const anyCg = pidsCg || memCg || cpuCg;
  return {
    cgroup: anyCg ? { support: cg, limits: { pidsMax: pidsCg ? l.processes : 0, memoryBytes: memCg ? l.memory_bytes : 0, cpuCores: cpuCg ? l.cpu_cores : 0 } } : undefined,
    rlimits: {
      cpuSeconds: l.cpu_seconds,
      fileSizeBytes: l.file_size_bytes,
      openFiles: l.open_files,
      // With a pids cgroup per sandbox, a per-uid limit shared by all sandboxes would let one thread starve the others.
      processes: pidsCg ? 0 : l.processes,
      addressSpaceBytes: asBytes,
    },
    tmpSizeBytes,
    diskQuotaBytes: l.disk_quota_bytes,
    report: {
      mechanism: anyCg ? v : "rlimit",
      processes,
      memory,
      cpu,
      tmp,
      diskQuota,
      rlimits: { cpu_seconds: l.cpu_seconds, file_size_bytes: l.file_size_bytes, open_files: l.open_files, address_space_bytes: asBytes },
      cgroupParents: cg.parents,
      notes,
    },
  };
}

/**
 * The effective sandbox limits on this machine, for `deerflow doctor`:
 * which mechanism enforces each limit (cgroup v2/v1, rlimit, tmpfs size,
 * measured quota, none) and its value. Detects cgroups for real (creates
 * and removes a probe cgroup); never throws.
 */
export function describeSandboxLimits(config: SandboxConfig, options: ResolveLimitsOptions = {}): SandboxLimitsReport {
  return resolveSandboxLimits(config, options).report;
}
