import { linkSignals } from "../abort";
import { HostFileOps } from "./host-fs";
import { threadDiskQuota } from "./limits/disk-quota";
import type { DiskUsage, ThreadDiskQuota } from "./limits/disk-quota";
import { PathMapper } from "./path-mapper";
import type { MountPoint } from "./path-mapper";
import type { SandboxMount } from "../config/sandbox-config";
import { ensureThreadDirs, VIRTUAL_OUTPUTS, VIRTUAL_SKILLS, VIRTUAL_UPLOADS, VIRTUAL_USER_DATA, VIRTUAL_WORKSPACE } from "./thread-paths";
import type { DirOwner, ThreadDirs } from "./thread-paths";
import type {
  DirEntry,
  ExecuteOptions,
  ExecuteResult,
  FileStat,
  GlobOptions,
  GrepMatch,
  GrepOptions,
  LimitedResult,
  Sandbox,
  WriteOptions,
} from "./types";

/** What every host-backed sandbox needs. */
export interface MappedSandboxInit {
  id: string;
  dirs: ThreadDirs;
  /** Host skills directory, mounted read-only at `skillsContainerPath`. */
  skillsPath?: string;
  skillsContainerPath?: string;
  mounts?: SandboxMount[];
  /** Owner of files the host-side file tools create (bwrap uid drop). */
  owner?: DirOwner;
  /** Disk quota of the thread's workspace + uploads + outputs in bytes (0/absent = none). */
  diskQuotaBytes?: number;
}

/** The mount table of a thread: user-data (read-only listing root), the three rw dirs, skills (ro), custom mounts. */
export function threadMountPoints(init: MappedSandboxInit): MountPoint[] {
  const mounts: MountPoint[] = [
    { virtual: VIRTUAL_USER_DATA, host: init.dirs.userData, readOnly: true },
    { virtual: VIRTUAL_WORKSPACE, host: init.dirs.workspace, readOnly: false },
    { virtual: VIRTUAL_UPLOADS, host: init.dirs.uploads, readOnly: false },
    { virtual: VIRTUAL_OUTPUTS, host: init.dirs.outputs, readOnly: false },
  ];
  if (init.skillsPath) mounts.push({ virtual: init.skillsContainerPath ?? VIRTUAL_SKILLS, host: init.skillsPath, readOnly: true });
  for (const m of init.mounts ?? []) mounts.push({ virtual: m.container_path, host: m.host_path, readOnly: m.read_only });
  return mounts;
}

/**
 * Base of sandboxes whose files live on this host (local, bwrap): file
 * operations go through a confined {@link HostFileOps}; subclasses supply
 * `executeCommand`.
 */
export abstract class MappedSandbox implements Sandbox {
  readonly id: string;
  abstract readonly kind: string;
  abstract readonly isolated: boolean;
  readonly dirs: ThreadDirs;
  protected readonly mapper: PathMapper;
  protected readonly files: HostFileOps;
  protected readonly owner?: DirOwner;
  /** The thread's disk quota (shared with every writer of the same thread in this process). */
  protected readonly diskQuota?: ThreadDiskQuota;
  /** Aborted on dispose: kills every running command of this sandbox. */
  protected readonly lifetime = new AbortController();
  private ready?: Promise<void>;

  constructor(init: MappedSandboxInit) {
    this.id = init.id;
    this.dirs = init.dirs;
    this.owner = init.owner;
    this.mapper = new PathMapper(threadMountPoints(init));
    this.diskQuota = init.diskQuotaBytes ? threadDiskQuota(init.dirs.userData, init.diskQuotaBytes) : undefined;
    this.files = new HostFileOps(this.mapper, init.owner, this.diskQuota);
  }

  /** Create the thread directories (once). */
  init(): Promise<void> {
    this.ready ??= ensureThreadDirs(this.dirs, this.owner);
    return this.ready;
  }

  /** Kill running commands; the sandbox must not be used afterwards. */
  async dispose(): Promise<void> {
    this.lifetime.abort(new Error("sandbox released"));
  }

  abstract executeCommand(command: string, options?: ExecuteOptions): Promise<ExecuteResult>;

  readFile(path: string): Promise<string> {
    return this.files.readFile(path);
  }
  readFileBytes(path: string): Promise<Uint8Array> {
    return this.files.readFileBytes(path);
  }
  writeFile(path: string, content: string, options?: WriteOptions): Promise<void> {
    return this.files.writeFile(path, content, options);
  }
  updateFile(path: string, bytes: Uint8Array): Promise<void> {
    return this.files.updateFile(path, bytes);
  }
  listDir(path: string, maxDepth?: number): Promise<DirEntry[]> {
    return this.files.listDir(path, maxDepth);
  }
  glob(path: string, pattern: string, options?: GlobOptions): Promise<LimitedResult<string>> {
    return this.files.glob(path, pattern, options);
  }
  grep(path: string, pattern: string, options?: GrepOptions): Promise<LimitedResult<GrepMatch>> {
    return this.files.grep(path, pattern, options);
  }
  stat(path: string): Promise<FileStat | null> {
    return this.files.stat(path);
  }
  exists(path: string): Promise<boolean> {
    return this.files.exists(path);
  }
  maskPaths(text: string): string {
    return this.mapper.mask(text);
  }

  /**
   * Run `fn` with the caller's signal combined with this sandbox's lifetime, detached from both when it is
   * done: the lifetime outlives every command, and a caller's signal may outlive the call.
   */
  protected async withCommandSignal<T>(signal: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const linked = linkSignals([signal, this.lifetime.signal]);
    try {
      return await fn(linked.signal);
    } finally {
      linked.release();
    }
  }

  /**
   * Run one command of this sandbox: `run` gets a signal that ends with the caller's, the sandbox's lifetime,
   * or the thread's disk quota (watched while it runs: killed when the thread grows past it); the quota's
   * notice is added to stderr and host paths are masked in both streams. Every isolated tier runs its
   * commands through here, so they share one cancellation and quota behaviour.
   */
  protected async runCommand<R extends Pick<ExecuteResult, "stdout" | "stderr">>(
    callerSignal: AbortSignal | undefined,
    run: (signal: AbortSignal) => Promise<R>,
  ): Promise<R> {
    const quota = this.diskQuota;
    const baseline = quota ? await quota.current() : undefined;
    const quotaStop = new AbortController();
    let killedFor: DiskUsage | undefined;
    const watch =
      quota && baseline
        ? quota.watch(baseline, (u) => {
            killedFor = u;
            quotaStop.abort(new Error("disk quota exceeded"));
          })
        : undefined;
    let res: R;
    try {
      res = await this.withCommandSignal(callerSignal, async (signal) => {
        const linked = linkSignals([signal, quotaStop.signal]);
        try {
          return await run(linked.signal);
        } finally {
          linked.release();
        }
      });
    } finally {
      watch?.stop();
    }
    let stderr = res.stderr;
    if (quota) {
      const after = killedFor ?? (await quota.measure());
      if (killedFor || quota.exceeded(after)) stderr = `${stderr}${stderr && !stderr.endsWith("\n") ? "\n" : ""}${quota.notice(after, killedFor !== undefined)}`;
    }
    return { ...res, stdout: this.maskPaths(res.stdout), stderr: this.maskPaths(stderr) };
  }
}
