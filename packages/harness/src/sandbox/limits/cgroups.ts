import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SandboxError } from "../../errors";

/**
 * Per-sandbox cgroups. Why: RLIMIT_NPROC counts processes per uid, and every
 * sandbox runs as the same uid, so a fork flood in one thread used to make
 * every other thread's `fork()` fail; RLIMIT_AS does not count shared or
 * file-backed memory and breaks runtimes that reserve address space. A cgroup
 * per sandbox bounds processes, memory (+swap) and CPU of that thread alone.
 *
 * Where they go: cgroup v1 has no rule against processes in inner nodes, so
 * the parent is `<our cgroup>/deerflow-sandboxes` in each hierarchy (limits of
 * the service's own cgroup still bound the sandboxes). cgroup v2 forbids
 * processes in a cgroup that distributes controllers to children, so the
 * parent is a sibling of our cgroup (`<parent of ours>/deerflow-sandboxes`),
 * or our cgroup itself only when it is the hierarchy's root.
 */

/** Controllers used per sandbox. */
export type CgroupController = "pids" | "memory" | "cpu";

/** What this machine lets us do with cgroups (see {@link detectCgroups}). */
export interface CgroupSupport {
  /** 2 (unified), 1 (legacy hierarchies) or null (none writable). */
  version: 1 | 2 | null;
  /** Directory under which per-sandbox cgroups are created, per usable controller. */
  parents: Partial<Record<CgroupController, string>>;
  /** Why cgroups (or some controllers) are not used. */
  notes: string[];
}

/** Limits written into a sandbox cgroup (0 = not limited). */
export interface CgroupLimits {
  pidsMax: number;
  memoryBytes: number;
  cpuCores: number;
}

/** Name of the directory holding every sandbox cgroup. */
export const CGROUP_PARENT_NAME = "deerflow-sandboxes";

const CPU_PERIOD_US = 100_000;
const CONTROLLERS: CgroupController[] = ["pids", "memory", "cpu"];

interface CgroupMount {
  mountpoint: string;
  root: string;
}

function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** cgroup mounts of this mount namespace: the v2 one and one per v1 controller. */
function cgroupMounts(mountinfo: string): { v2?: CgroupMount; v1: Map<string, CgroupMount> } {
  const v1 = new Map<string, CgroupMount>();
  let v2: CgroupMount | undefined;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const f = left.split(" ");
    const [fstype, , superOpts = ""] = right.split(" ");
    const mount = { root: unescapeMountField(f[3] ?? "/"), mountpoint: unescapeMountField(f[4] ?? "") };
    if (fstype === "cgroup2") v2 ??= mount;
    else if (fstype === "cgroup") for (const opt of superOpts.split(",")) if (!v1.has(opt)) v1.set(opt, mount);
  }
  return { v2, v1 };
}

/** Our own cgroup paths from /proc/self/cgroup: the v2 one and one per v1 controller. */
function ownCgroups(text: string): { v2?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of text.split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === "0" && m[2] === "") v2 = m[3];
    else for (const c of m[2].split(",")) v1.set(c, m[3]);
  }
  return { v2, v1 };
}

/** Host directory of cgroup `own` in `mount`, or undefined when it is outside the mounted subtree. */
function dirOf(mount: CgroupMount, own: string): string | undefined {
  const root = mount.root === "/" ? "" : mount.root;
  if (own !== root && !own.startsWith(`${root}/`) && root !== "") return undefined;
  return path.join(mount.mountpoint, own.slice(root.length));
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function words(file: string): Set<string> {
  return new Set((readText(file) ?? "").split(/\s+/).filter(Boolean));
}

/** Create `dir/<probe>`, write `file` in it and remove it again: the only reliable writability test. */
function trialChild(dir: string, file: string, value: string): string | undefined {
  const probe = path.join(dir, `probe.p${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    mkdirSync(probe);
    writeFileSync(path.join(probe, file), value);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      /* never created */
    }
  }
}

function tryV2(mount: CgroupMount, own: string | undefined, notes: string[]): CgroupSupport | undefined {
  const ownDir = own === undefined ? undefined : dirOf(mount, own);
  if (!ownDir) return undefined;
  // A sibling of our cgroup; our own cgroup only when it is the root (exempt from the no-internal-processes rule).
  const base = path.resolve(ownDir) === path.resolve(mount.mountpoint) ? ownDir : path.dirname(ownDir);
  const available = words(path.join(base, "cgroup.controllers"));
  if (!available.has("pids") || !available.has("memory")) {
    notes.push(`cgroup v2 at ${base}: controllers pids and memory are not available (has: ${[...available].join(" ") || "none"})`);
    return undefined;
  }
  const wanted = CONTROLLERS.filter((c) => available.has(c));
  const parent = path.join(base, CGROUP_PARENT_NAME);
  try {
    const enable = wanted.map((c) => `+${c}`).join(" ");
    if (!wanted.every((c) => words(path.join(base, "cgroup.subtree_control")).has(c))) writeFileSync(path.join(base, "cgroup.subtree_control"), enable);
    mkdirSync(parent, { recursive: true });
    if (!wanted.every((c) => words(path.join(parent, "cgroup.subtree_control")).has(c))) writeFileSync(path.join(parent, "cgroup.subtree_control"), enable);
  } catch (err) {
    notes.push(`cgroup v2 at ${base} is not writable: ${(err as Error).message}`);
    return undefined;
  }
  const failed = trialChild(parent, "pids.max", "max");
  if (failed) {
    notes.push(`cgroup v2 at ${parent}: cannot create a sandbox cgroup: ${failed}`);
    return undefined;
  }
  const parents: CgroupSupport["parents"] = {};
  for (const c of wanted) parents[c] = parent;
  if (!parents.cpu) notes.push("cgroup v2: the cpu controller is not available; cpu_cores is not enforced");
  return { version: 2, parents, notes };
}

const V1_TRIAL: Record<CgroupController, [string, string]> = {
  pids: ["pids.max", "max"],
  memory: ["memory.limit_in_bytes", "-1"],
  cpu: ["cpu.cfs_quota_us", "-1"],
};

function tryV1(mounts: Map<string, CgroupMount>, own: Map<string, string>, notes: string[]): CgroupSupport | undefined {
  const parents: CgroupSupport["parents"] = {};
  for (const c of CONTROLLERS) {
    const mount = mounts.get(c);
    const ownPath = own.get(c);
    const ownDir = mount && ownPath !== undefined ? dirOf(mount, ownPath) : undefined;
    if (!ownDir) {
      notes.push(`cgroup v1: no ${c} hierarchy of ours is mounted`);
      continue;
    }
    const parent = path.join(ownDir, CGROUP_PARENT_NAME);
    try {
      mkdirSync(parent, { recursive: true });
    } catch (err) {
      notes.push(`cgroup v1 ${c} at ${ownDir} is not writable: ${(err as Error).message}`);
      continue;
    }
    const failed = trialChild(parent, ...V1_TRIAL[c]);
    if (failed) notes.push(`cgroup v1 ${c} at ${parent}: cannot create a sandbox cgroup: ${failed}`);
    else parents[c] = parent;
  }
  if (!parents.pids && !parents.memory) return undefined;
  return { version: 1, parents, notes };
}

let cached: CgroupSupport | undefined;

/**
 * Which cgroups this process may create sandbox cgroups in: v2 when its
 * pids and memory controllers can be delegated to a `deerflow-sandboxes`
 * directory, else the writable v1 hierarchies (pids, memory, cpu), else
 * none (rootless without delegation, read-only cgroupfs). Every candidate
 * is tried for real (a child is created, a limit written, and removed).
 * Cached for the process; `refresh` re-detects, and `mountinfo` /
 * `selfCgroup` replace `/proc/self/{mountinfo,cgroup}` (tests; not cached).
 */
export function detectCgroups(options: { refresh?: boolean; mountinfo?: string; selfCgroup?: string } = {}): CgroupSupport {
  const injected = options.mountinfo !== undefined || options.selfCgroup !== undefined;
  if (cached && !options.refresh && !injected) return cached;
  const notes: string[] = [];
  const mountinfo = options.mountinfo ?? readText("/proc/self/mountinfo");
  const self = options.selfCgroup ?? readText("/proc/self/cgroup");
  let result: CgroupSupport | undefined;
  if (mountinfo === undefined || self === undefined) {
    notes.push("no /proc/self/mountinfo or /proc/self/cgroup (not Linux?)");
  } else {
    const mounts = cgroupMounts(mountinfo);
    const own = ownCgroups(self);
    if (mounts.v2) result = tryV2(mounts.v2, own.v2, notes);
    result ??= tryV1(mounts.v1, own.v1, notes);
  }
  const support = result ?? { version: null, parents: {}, notes };
  for (const dir of new Set(Object.values(support.parents))) removeStale(dir);
  if (!injected) cached = support;
  return support;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Remove empty sandbox cgroups left by a service that died without
 * disposing them. Only empty ones whose creating pid is gone: nothing is
 * ever killed here (another service may share the parent).
 */
function removeStale(parent: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of entries) {
    const m = /\.p(\d+)-[0-9a-f]+$/.exec(name);
    if (!m || pidAlive(Number(m[1]))) continue;
    try {
      rmdirSync(path.join(parent, name));
    } catch {
      /* still populated, or not ours to remove */
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The cgroup(s) of one sandbox: one directory per controller in v1, a
 * single one in v2. Created on first use and re-created if it vanished.
 */
export class SandboxCgroup {
  /** Directory per controller. */
  readonly dirs: Partial<Record<CgroupController, string>>;
  private created = false;

  constructor(
    readonly support: CgroupSupport,
    label: string,
    readonly limits: CgroupLimits,
  ) {
    const name = `${label.replace(/[^A-Za-z0-9_-]+/g, ".")}.p${process.pid}-${randomBytes(4).toString("hex")}`;
    const dirs: Partial<Record<CgroupController, string>> = {};
    for (const c of CONTROLLERS) {
      const parent = support.parents[c];
      if (parent) dirs[c] = path.join(parent, name);
    }
    this.dirs = dirs;
  }

  private uniqueDirs(): string[] {
    return [...new Set(Object.values(this.dirs))];
  }

  /**
   * Create the cgroup(s) with their limits when missing and return the
   * `cgroup.procs` files a command must join.
   * @throws SandboxError `sandbox_cgroup_failed` naming the file that could not be written.
   */
  ensure(): string[] {
    const dirs = this.uniqueDirs();
    if (!this.created || !dirs.every((d) => existsSync(d))) {
      for (const d of dirs) mkdirSync(d, { recursive: true });
      this.writeLimits();
      this.created = true;
    }
    return dirs.map((d) => path.join(d, "cgroup.procs"));
  }

  private write(dir: string | undefined, file: string, value: string, optional = false): void {
    if (!dir) return;
    const target = path.join(dir, file);
    if (optional && !existsSync(target)) return;
    try {
      writeFileSync(target, value);
    } catch (err) {
      throw new SandboxError(`Cannot set the sandbox limit ${target} to ${value}: ${(err as Error).message}`, { code: "sandbox_cgroup_failed", cause: err });
    }
  }

  private writeLimits(): void {
    const { pidsMax, memoryBytes, cpuCores } = this.limits;
    const d = this.dirs;
    this.write(d.pids, "pids.max", pidsMax > 0 ? String(pidsMax) : "max");
    const quota = cpuCores > 0 ? Math.max(1000, Math.round(cpuCores * CPU_PERIOD_US)) : 0;
    if (this.support.version === 2) {
      if (memoryBytes > 0) {
        this.write(d.memory, "memory.max", String(memoryBytes));
        // No swap: otherwise the sandbox could use memory_bytes of RAM plus all of the swap.
        this.write(d.memory, "memory.swap.max", "0", true);
      }
      if (quota > 0) this.write(d.cpu, "cpu.max", `${quota} ${CPU_PERIOD_US}`);
    } else {
      if (memoryBytes > 0) {
        this.write(d.memory, "memory.limit_in_bytes", String(memoryBytes));
        // memory+swap capped at the same value (only when swap accounting is on).
        this.write(d.memory, "memory.memsw.limit_in_bytes", String(memoryBytes), true);
      }
      if (quota > 0) {
        this.write(d.cpu, "cpu.cfs_period_us", String(CPU_PERIOD_US));
        this.write(d.cpu, "cpu.cfs_quota_us", String(quota));
      }
    }
  }

  /** Pids currently in the sandbox's cgroup(s). */
  pids(): number[] {
    const out = new Set<number>();
    for (const d of this.uniqueDirs()) {
      for (const line of (readText(path.join(d, "cgroup.procs")) ?? "").split("\n")) if (line.trim()) out.add(Number(line));
    }
    return [...out];
  }

  /**
   * Kill everything left in the cgroup(s) and remove them. Bounded: after
   * ~2 s of retries a cgroup that is still busy is left for the stale sweep
   * of the next start.
   */
  async destroy(): Promise<void> {
    if (!this.created) return;
    const dirs = this.uniqueDirs();
    if (this.support.version === 2 && dirs[0] && existsSync(path.join(dirs[0], "cgroup.kill"))) {
      try {
        writeFileSync(path.join(dirs[0], "cgroup.kill"), "1");
      } catch {
        /* fall back to killing pid by pid */
      }
    }
    for (let attempt = 0; attempt < 100; attempt++) {
      for (const pid of this.pids()) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
      }
      let left = 0;
      for (const d of dirs) {
        try {
          rmdirSync(d);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") left++;
        }
      }
      if (left === 0) {
        this.created = false;
        return;
      }
      await sleep(20);
    }
  }
}

