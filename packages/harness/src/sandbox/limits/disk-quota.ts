import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { SandboxError } from "../../errors";

/**
 * Per-thread disk quota over a thread's `user-data` (workspace, uploads,
 * outputs). Why measured rather than enforced by the filesystem: project
 * quotas (XFS/ext4 prjquota) need a filesystem mounted with them and root,
 * a loop image per thread needs root and fixes the size up front; neither is
 * available on a typical laptop, container or CI runner. So usage is
 * measured (allocated blocks, hard links counted once) and enforced at the
 * three places that write there:
 * - host-side writes (write_file, str_replace, uploads) are checked before
 *   writing and refused with SandboxError `disk_quota_exceeded`;
 * - while a sandboxed command runs, usage is re-measured periodically and
 *   the command is killed when it grows past the quota;
 * - after every command usage is measured again, and the result says so.
 * Bound: a command can overshoot by what it writes within one polling
 * interval (each single file stays bounded by RLIMIT_FSIZE).
 */

/** Walks stop after this many entries; more counts as over quota (bounds inode floods and walk time). */
export const MAX_QUOTA_ENTRIES = 1_000_000;
/** Shortest interval between two measurements while a command runs. */
export const QUOTA_POLL_MIN_MS = 1000;

/** Result of {@link measureDiskUsage}. */
export interface DiskUsage {
  /** Allocated bytes (st_blocks × 512), hard links counted once. */
  bytes: number;
  /** Entries seen (files, dirs, links). */
  entries: number;
  /** False when the walk stopped at {@link MAX_QUOTA_ENTRIES} or met a part it cannot measure. */
  complete: boolean;
  /** The path (relative to the measured root) the walk could not read, and why; such a tree counts as over quota. */
  unmeasured?: string;
}

/** Errors that mean the entry is gone (deleted while the walk ran), not that it is hidden from the walk. */
const VANISHED = new Set(["ENOENT", "ENOTDIR"]);

/**
 * Allocated bytes under `root` (symlinks not followed). An entry deleted
 * while the walk runs is skipped; one the walk cannot read (a path longer
 * than PATH_MAX, which a command builds with relative mkdir/chdir, or a
 * directory its owner made unreadable to a non-root service) makes the
 * result incomplete, so whatever lies below it can never go uncounted.
 */
export async function measureDiskUsage(root: string, maxEntries = MAX_QUOTA_ENTRIES): Promise<DiskUsage> {
  let bytes = 0;
  let entries = 0;
  let unmeasured: string | undefined;
  const seen = new Set<string>();
  const hidden = (p: string, err: unknown): boolean => {
    const code = (err as NodeJS.ErrnoException | undefined)?.code ?? String(err);
    if (VANISHED.has(code)) return false;
    unmeasured ??= `${path.relative(root, p).slice(0, 200)}: ${code}`;
    return true;
  };
  const charge = async (p: string): Promise<boolean> => {
    let st;
    try {
      st = await lstat(p);
    } catch (err) {
      hidden(p, err);
      return false;
    }
    if (st.nlink > 1 && !st.isDirectory()) {
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) return st.isDirectory();
      seen.add(key);
    }
    bytes += typeof st.blocks === "number" ? st.blocks * 512 : st.size;
    return st.isDirectory();
  };
  const stack: string[] = [];
  if (await charge(root)) stack.push(root);
  while (stack.length > 0) {
    const dir = stack.pop() as string;
    let list: Dirent[];
    try {
      list = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      hidden(dir, err);
      continue;
    }
    for (let i = 0; i < list.length; i += 256) {
      const batch = list.slice(i, i + 256);
      entries += batch.length;
      if (entries > maxEntries) return { bytes, entries, complete: false };
      const isDir = await Promise.all(batch.map((e) => charge(path.join(dir, e.name))));
      batch.forEach((e, k) => {
        if (isDir[k]) stack.push(path.join(dir, e.name));
      });
    }
  }
  return unmeasured === undefined ? { bytes, entries, complete: true } : { bytes, entries, complete: false, unmeasured };
}

/** Why an incomplete measurement counts as over quota, for the messages. */
function incompleteReason(u: DiskUsage): string {
  return u.unmeasured !== undefined
    ? `${SCOPE} contain a path that cannot be measured (${u.unmeasured}; e.g. nested deeper than the host's path length limit), which counts as over the quota`
    : `${SCOPE} hold more than ${MAX_QUOTA_ENTRIES} entries`;
}

/** `5 MiB`, `1.5 GiB`, `812 B`. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[u]}`;
}

const SETTING = "sandbox.limits.disk_quota_bytes";
const SCOPE = "this thread's files (workspace, uploads, outputs)";

/**
 * The quota of one thread directory. Usage is cached between measurements
 * and advanced by every reservation; a write is refused only after a fresh
 * measurement confirms it, so a stale cache (files deleted by a command, a
 * thread deleted) never refuses wrongly.
 */
export class ThreadDiskQuota {
  private usage?: DiskUsage;
  private measuring?: Promise<DiskUsage>;
  /** Duration of the last walk (ms): scales the polling interval. */
  lastWalkMs = 0;

  constructor(
    /** Host `user-data` directory of the thread. */
    readonly root: string,
    /** Quota in bytes (0 = none). */
    readonly quotaBytes: number,
  ) {}

  /** Whether a quota applies. */
  get enabled(): boolean {
    return this.quotaBytes > 0;
  }

  /** A fresh measurement (concurrent callers share one walk). */
  measure(): Promise<DiskUsage> {
    this.measuring ??= (async () => {
      const t0 = performance.now();
      try {
        const u = await measureDiskUsage(this.root);
        this.lastWalkMs = performance.now() - t0;
        this.usage = u;
        return u;
      } finally {
        this.measuring = undefined;
      }
    })();
    return this.measuring;
  }

  /** The cached usage, measured when unknown. */
  async current(): Promise<DiskUsage> {
    return this.usage ?? this.measure();
  }

  /** Whether `u` is over the quota. */
  exceeded(u: DiskUsage): boolean {
    return this.enabled && (!u.complete || u.bytes > this.quotaBytes);
  }

  /**
   * Check that growing the thread's files by `delta` bytes stays within the
   * quota, and count it. Shrinking writes always pass.
   * @param what virtual path (or description) named in the error.
   * @throws SandboxError `disk_quota_exceeded` naming the usage, the quota and the setting.
   */
  async reserve(delta: number, what: string): Promise<void> {
    if (!this.enabled) return;
    if (delta <= 0) {
      if (this.usage) this.usage = { ...this.usage, bytes: Math.max(0, this.usage.bytes + delta) };
      return;
    }
    let u = await this.current();
    if (this.exceeded({ ...u, bytes: u.bytes + delta })) u = await this.measure();
    if (this.exceeded({ ...u, bytes: u.bytes + delta })) {
      const detail = u.complete
        ? `writing ${what} (${formatBytes(delta)}) would bring ${SCOPE} to ${formatBytes(u.bytes + delta)}, over the quota of ${formatBytes(this.quotaBytes)}`
        : incompleteReason(u);
      throw new SandboxError(`Disk quota exceeded: ${detail} (${SETTING}). Delete files under /mnt/user-data or raise ${SETTING}.`, {
        code: "disk_quota_exceeded",
        details: { usage_bytes: u.bytes, quota_bytes: this.quotaBytes, requested_bytes: delta, setting: SETTING },
      });
    }
    this.usage = { ...u, bytes: u.bytes + delta };
  }

  /** The notice a command's result carries when usage is over the quota (`killed`: the command was stopped for it). */
  notice(u: DiskUsage, killed: boolean): string {
    const now = u.complete ? `${SCOPE} use ${formatBytes(u.bytes)}, over the disk quota of ${formatBytes(this.quotaBytes)}` : incompleteReason(u);
    return killed
      ? `Command killed: disk quota exceeded: ${now} (${SETTING}). Delete files under /mnt/user-data or raise ${SETTING}.`
      : `Disk quota exceeded: ${now} (${SETTING}); further writes are refused until files are deleted.`;
  }

  /**
   * Re-measure every max({@link QUOTA_POLL_MIN_MS}, 10 × walk time) while a
   * command runs and call `onExceeded` once when usage is over the quota
   * and above `baseline` (a thread already over quota may still run
   * commands that delete files). Timers are unref'd; `stop()` ends it.
   */
  watch(baseline: DiskUsage, onExceeded: (u: DiskUsage) => void): { stop(): void } {
    if (!this.enabled) return { stop() {} };
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const schedule = () => {
      if (stopped) return;
      timer = setTimeout(tick, Math.max(QUOTA_POLL_MIN_MS, 10 * this.lastWalkMs));
      timer.unref();
    };
    const tick = () => {
      void this.measure().then(
        (u) => {
          if (stopped) return;
          if (this.exceeded(u) && (u.bytes > baseline.bytes || !u.complete)) {
            stopped = true;
            onExceeded(u);
          } else schedule();
        },
        () => schedule(),
      );
    };
    schedule();
    return {
      stop() {
        stopped = true;
        if (timer) clearTimeout(timer);
      },
    };
  }
}

const registry = new Map<string, ThreadDiskQuota>();

/**
 * The shared quota object of a thread directory: the sandbox's commands and
 * file tools and the uploads of the same process all count against one
 * cached usage. Bounded: beyond 1024 threads the oldest entries are dropped
 * (they are simply re-measured when used again).
 */
export function threadDiskQuota(userDataDir: string, quotaBytes: number): ThreadDiskQuota {
  const key = `${path.resolve(userDataDir)}\0${quotaBytes}`;
  let q = registry.get(key);
  if (!q) {
    if (registry.size >= 1024) registry.delete(registry.keys().next().value as string);
    q = new ThreadDiskQuota(path.resolve(userDataDir), quotaBytes);
    registry.set(key, q);
  }
  return q;
}

/**
 * Check (and count) `addBytes` more bytes in a thread's `user-data` before
 * writing them from the host, e.g. an upload.
 * @param userDataDir host `…/threads/{id}/user-data` (`ThreadDirs.userData`).
 * @param quotaBytes `sandbox.limits.disk_quota_bytes` (0 = none).
 * @param what the virtual path named in the error.
 * @throws SandboxError `disk_quota_exceeded`.
 */
export async function assertThreadDiskQuota(userDataDir: string, quotaBytes: number, addBytes: number, what: string): Promise<void> {
  await threadDiskQuota(userDataDir, quotaBytes).reserve(addBytes, what);
}
