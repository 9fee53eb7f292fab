import { chmod, stat } from "node:fs/promises";
import path from "node:path";
import { MappedSandbox } from "./mapped-sandbox";
import type { MappedSandboxInit } from "./mapped-sandbox";
import { buildBwrapCommand, buildBwrapInvocation } from "./bwrap/argv";
import type { BwrapBind, BwrapCommandSpec, BwrapLimits } from "./bwrap/argv";
import { SandboxCgroup } from "./limits/cgroups";
import type { CgroupLimits, CgroupSupport } from "./limits/cgroups";
import type { StageTools } from "./bwrap/staging";
import type { NetworkSettings } from "../config/sandbox-network-config";
import { SandboxEgress } from "./network/egress";
import type { EgressCommandParts } from "./network/egress";
import type { EgressPolicy } from "./network/policy";
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
  /** `sandbox.network`; outside `isolated` commands reach out only through {@link egressPolicy}'s proxy. */
  network: NetworkSettings;
  /** The provider's egress policy (required unless the mode is `isolated`). */
  egressPolicy?: EgressPolicy;
  limits: BwrapLimits;
  /** Per-sandbox cgroup to run every command in (see `limits/cgroups.ts`). */
  cgroup?: { support: CgroupSupport; limits: CgroupLimits };
  /** Size of the sandbox's `/tmp` in bytes (bwrap `--size`). */
  tmpSizeBytes?: number;
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
  /** This sandbox's cgroup(s), when the machine allows them. */
  readonly cgroup?: SandboxCgroup;

  /** This sandbox's egress proxy (allowlist/open modes), started on the first command. */
  private readonly egress?: SandboxEgress;

  constructor(init: BwrapSandboxInit) {
    super({ ...init, owner: init.runAs });
    this.opts = init;
    if (init.network.mode !== "isolated") {
      if (!init.egressPolicy) throw new Error(`sandbox.network mode '${init.network.mode}' needs an egress policy`);
      this.egress = new SandboxEgress({ policy: init.egressPolicy, owner: init.runAs });
    }
    if (init.cgroup) this.cgroup = new SandboxCgroup(init.cgroup.support, init.id, init.cgroup.limits);
  }

  /** Kill running commands, then whatever is left in the cgroup, and remove it. */
  override async dispose(): Promise<void> {
    await super.dispose();
    await this.egress?.close();
    await this.cgroup?.destroy();
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

  /** The argv that would run `command`, options inline (exposed for tests and diagnostics; commands pass them via `--args`). */
  commandArgv(command: string, extraEnv: Record<string, string> = {}): string[] {
    return buildBwrapCommand(this.commandSpec(command, extraEnv));
  }

  private commandSpec(command: string, extraEnv: Record<string, string> = {}, cgroupProcs?: string[], net?: EgressCommandParts): BwrapCommandSpec {
    return {
      bwrapPath: this.opts.bwrapPath,
      prlimitPath: this.opts.prlimitPath,
      setprivPath: this.opts.setprivPath,
      runAs: this.opts.runAs,
      stage: this.opts.stage,
      binds: net ? [...this.binds(), ...net.binds] : this.binds(),
      // Always its own network namespace; in network modes the proxy's forwarder is the only way out.
      network: net !== undefined,
      limits: this.opts.limits,
      cgroupProcs,
      tmpSizeBytes: this.opts.tmpSizeBytes,
      cwd: VIRTUAL_WORKSPACE,
      env: {
        ...this.opts.environment,
        ...extraEnv,
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: VIRTUAL_WORKSPACE,
        LANG: "C.UTF-8",
        TMPDIR: "/tmp",
        ...net?.env,
      },
      command: net ? `${net.prelude}${command}` : command,
    };
  }

  /**
   * Run `command` in the sandbox's cgroup, bwrap's options passed through
   * fd 3 (no host path in any argv inside), watched against the thread's
   * disk quota (killed when it grows past it; see `limits/disk-quota.ts`).
   */
  async executeCommand(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    await this.init();
    const net = await this.egress?.prepare();
    const { argv, argsData } = buildBwrapInvocation(this.commandSpec(command, options.env, this.cgroup?.ensure(), net));
    return this.runCommand(options.signal, (signal) =>
      spawnCapped(argv, {
        // The host-side chain (prlimit, sh, unshare, setpriv, bwrap) starts in `/`, never in a directory a
        // sandbox or a custom mount could write; bwrap then changes into the sandbox's own workspace.
        cwd: "/",
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: options.timeoutMs ?? this.opts.defaultTimeoutMs,
        signal,
        maxOutputBytes: this.opts.maxOutputBytes,
        fd3Data: argsData,
      }),
    );
  }
}
