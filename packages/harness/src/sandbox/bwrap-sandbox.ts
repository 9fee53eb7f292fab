import { chmod, stat } from "node:fs/promises";
import path from "node:path";
import { MappedSandbox } from "./mapped-sandbox";
import type { MappedSandboxInit } from "./mapped-sandbox";
import { buildBwrapCommand } from "./bwrap/argv";
import type { BwrapBind, BwrapLimits } from "./bwrap/argv";
import type { StageTools } from "./bwrap/staging";
import { spawnCapped } from "./spawn-capped";
import { ensureThreadDirs, VIRTUAL_OUTPUTS, VIRTUAL_SKILLS, VIRTUAL_UPLOADS, VIRTUAL_WORKSPACE } from "./thread-paths";
import type { ExecuteOptions, ExecuteResult } from "./types";

/** Options of {@link BwrapSandbox}. */
export interface BwrapSandboxInit extends MappedSandboxInit {
  baseDir: string;
  bwrapPath: string;
  prlimitPath?: string;
  setprivPath?: string;
  /** Unprivileged uid/gid to run as (set when the service runs as root). */
  runAs?: { uid: number; gid: number };
  /** Stage bind sources in a private mount namespace (see `bwrap/staging.ts`). */
  stage?: StageTools;
  network: boolean;
  limits: BwrapLimits;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  environment: Record<string, string>;
}

/**
 * A thread sandbox whose commands run in bubblewrap (see
 * `docs/sandbox.md`). Host-side file tools are confined by real-path checks
 * and O_NOFOLLOW opens, so a symlink planted by a command cannot lead them
 * outside the thread's directories.
 */
export class BwrapSandbox extends MappedSandbox {
  readonly kind = "bwrap";
  readonly isolated = true;
  private readonly opts: BwrapSandboxInit;
  private prepared?: Promise<void>;

  constructor(init: BwrapSandboxInit) {
    super({ ...init, owner: init.runAs });
    this.opts = init;
  }

  /**
   * Create the thread dirs (owned by the sandbox uid). Unstaged, also make
   * their ancestors inside the data dir enterable by it; staged binds need
   * no path to be enterable, so nothing is opened up.
   */
  override init(): Promise<void> {
    this.prepared ??= (async () => {
      await ensureThreadDirs(this.dirs, this.opts.runAs);
      if (!this.opts.runAs || this.opts.stage) return;
      const base = path.resolve(this.opts.baseDir);
      for (let dir = this.dirs.userData; ; dir = path.dirname(dir)) {
        const s = await stat(dir);
        if ((s.mode & 0o001) === 0) await chmod(dir, (s.mode & 0o7777) | 0o111);
        if (dir === base || dir === path.dirname(dir)) break;
      }
    })();
    return this.prepared;
  }

  /** The binds of this thread: three rw dirs, skills ro, custom mounts. */
  binds(): BwrapBind[] {
    const binds: BwrapBind[] = [
      { host: this.dirs.workspace, dest: VIRTUAL_WORKSPACE, readOnly: false },
      { host: this.dirs.uploads, dest: VIRTUAL_UPLOADS, readOnly: false },
      { host: this.dirs.outputs, dest: VIRTUAL_OUTPUTS, readOnly: false },
    ];
    if (this.opts.skillsPath) {
      binds.push({ host: this.opts.skillsPath, dest: this.opts.skillsContainerPath ?? VIRTUAL_SKILLS, readOnly: true, optional: true });
    }
    for (const m of this.opts.mounts ?? []) binds.push({ host: m.host_path, dest: m.container_path, readOnly: m.read_only, optional: true });
    return binds;
  }

  /** The argv that would run `command` (exposed for tests and diagnostics). */
  commandArgv(command: string, extraEnv: Record<string, string> = {}): string[] {
    return buildBwrapCommand({
      bwrapPath: this.opts.bwrapPath,
      prlimitPath: this.opts.prlimitPath,
      setprivPath: this.opts.setprivPath,
      runAs: this.opts.runAs,
      stage: this.opts.stage,
      binds: this.binds(),
      network: this.opts.network,
      limits: this.opts.limits,
      cwd: VIRTUAL_WORKSPACE,
      env: {
        ...this.opts.environment,
        ...extraEnv,
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: VIRTUAL_WORKSPACE,
        LANG: "C.UTF-8",
        TMPDIR: "/tmp",
      },
      command,
    });
  }

  async executeCommand(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    await this.init();
    const argv = this.commandArgv(command, options.env);
    const res = await this.withCommandSignal(options.signal, (signal) =>
      spawnCapped(argv, {
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: options.timeoutMs ?? this.opts.defaultTimeoutMs,
        signal,
        maxOutputBytes: this.opts.maxOutputBytes,
      }),
    );
    return { ...res, stdout: this.maskPaths(res.stdout), stderr: this.maskPaths(res.stderr) };
  }
}
