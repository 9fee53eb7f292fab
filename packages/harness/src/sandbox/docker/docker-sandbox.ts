import { MappedSandbox } from "../mapped-sandbox";
import type { MappedSandboxInit } from "../mapped-sandbox";
import { ensureThreadDirs, VIRTUAL_WORKSPACE } from "../thread-paths";
import type { ExecuteOptions, ExecuteResult } from "../types";
import { sandboxEnv } from "./container-spec";
import { execKey } from "./engine";
import type { DockerEngine, EngineExecResult, PreparedExec } from "./engine";
import { DockerError } from "./errors";

/**
 * The container behind one sandbox, as the provider manages it: `ensure`
 * returns the id of a running container (creating it, or a fresh one after
 * `lost`), `lost` says the one given out is dead or gone.
 */
export interface ContainerHandle {
  ensure(): Promise<string>;
  lost(containerId: string): void;
}

/** Options of {@link DockerSandbox}. */
export interface DockerSandboxInit extends MappedSandboxInit {
  engine: DockerEngine;
  container: ContainerHandle;
  /** uid/gid commands run as (also the owner of the thread dirs when the service is root). */
  runAs: { uid: number; gid: number };
  /** Chown the thread dirs to `runAs` (only possible, and only needed, when the service is root). */
  chownDirs: boolean;
  defaultTimeoutMs: number;
  maxOutputBytes: number;
  environment: Record<string, string>;
  /** Proxy variables of the egress forwarder (network modes), set on every command. */
  networkEnv?: Record<string, string>;
}

/** The exec started ahead for the next command (see `DockerSandbox.prepareNext`). */
interface WarmExec {
  container: string;
  key: string;
  exec: Promise<PreparedExec | undefined>;
  /** A command took it (it must not be discarded when it finishes starting). */
  taken: boolean;
}

/** Codes meaning the container is no longer there to run a command in. */
const CONTAINER_GONE = new Set(["docker_container_missing", "docker_container_not_running"]);

/**
 * A thread sandbox whose commands run in its own Docker container (see
 * docs/sandbox.md). The thread dirs are bind-mounted into the container, so
 * the file tools work on the host through the same confined
 * {@link MappedSandbox} operations as the bubblewrap tier (real-path checks,
 * O_NOFOLLOW opens): a symlink planted by a command cannot lead them out.
 * A container found dead or missing is recreated and the command retried
 * once, transparently.
 */
export class DockerSandbox extends MappedSandbox {
  readonly kind = "docker";
  readonly isolated = true;
  private readonly opts: DockerSandboxInit;
  private prepared?: Promise<void>;
  /** Host skills dir bound read-only into the container (if any). */
  readonly skillsHostPath?: string;
  private running = 0;
  /** The next command's exec, started ahead (see {@link DockerEngine.prepareExec}); one at a time. */
  private warm?: WarmExec;
  /** Commands that ran in a prepared exec / a cold one (diagnostics, tests, the benchmark). */
  readonly execStats = { warm: 0, cold: 0 };

  constructor(init: DockerSandboxInit) {
    super({ ...init, owner: init.chownDirs ? init.runAs : undefined });
    this.opts = init;
    this.skillsHostPath = init.skillsPath;
  }

  /** Commands running now (the provider only swaps the container between commands). */
  get inFlight(): number {
    return this.running;
  }

  /** Create the thread dirs (owned by the sandbox uid when the service is root). */
  override init(): Promise<void> {
    this.prepared ??= ensureThreadDirs(this.dirs, this.opts.chownDirs ? this.opts.runAs : undefined);
    return this.prepared;
  }

  /** Make the thread dirs again (they were deleted under a live sandbox, e.g. with the thread). */
  async recreateDirs(): Promise<void> {
    this.prepared = undefined;
    await this.init();
  }

  /**
   * Run `command` via exec in the container (as the sandbox uid, in the
   * workspace), with the bubblewrap tier's timeout, output cap, cancellation
   * and disk-quota watch.
   */
  async executeCommand(command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    await this.init();
    this.running++;
    try {
      const res = await this.runCommand(options.signal, (signal) => this.execWithRecovery(command, options, signal));
      return { stdout: res.stdout, stderr: res.stderr, exitCode: res.exitCode, timedOut: res.timedOut, truncated: res.truncated };
    } finally {
      this.running--;
    }
  }

  /** Options of a command's exec (`extra` env from the caller), without its timeout and signal. */
  private execBase(extra?: Record<string, string>) {
    return {
      user: `${this.opts.runAs.uid}:${this.opts.runAs.gid}`,
      env: sandboxEnv(this.opts.environment, { ...extra, ...this.opts.networkEnv }),
      workingDir: VIRTUAL_WORKSPACE,
      maxOutputBytes: this.opts.maxOutputBytes,
    };
  }

  /**
   * Start the next command's exec in `container` now (`runc exec` is most of a command's cost:
   * ~70–150 ms here), so the next command only writes itself to that exec's stdin. Only for
   * commands without caller env (the exec's environment is fixed when it starts), the usual case.
   */
  private prepareNext(container: string): void {
    if (this.lifetime.signal.aborted) return;
    const base = this.execBase();
    const exec = this.opts.engine.prepareExec(container, base).catch(() => undefined);
    const warm: WarmExec = { container, key: execKey(base), exec, taken: false };
    // Two commands ended close together: one prepared exec is kept, the older one closed.
    const older = this.warm;
    if (older && !older.taken) {
      older.taken = true;
      void older.exec.then((p) => p?.discard());
    }
    this.warm = warm;
    void exec.then((p) => {
      // Released, or replaced by a newer one, while it was starting: close it (its wrapper runs nothing without a command).
      if (p && !warm.taken && (this.lifetime.signal.aborted || this.warm !== warm)) p.discard();
    });
  }

  /** The prepared exec for a command in `container` with these options, if one is (being) started; waits for one still starting. */
  private async takeWarm(container: string, key: string): Promise<PreparedExec | undefined> {
    const warm = this.warm;
    if (!warm) return undefined;
    this.warm = undefined;
    warm.taken = true;
    if (warm.container !== container || warm.key !== key) {
      void warm.exec.then((p) => p?.discard());
      return undefined;
    }
    const p = await warm.exec;
    return p?.usable ? p : undefined;
  }

  /** Close the prepared exec (the sandbox is released). */
  override async dispose(): Promise<void> {
    await super.dispose();
    const warm = this.warm;
    this.warm = undefined;
    void warm?.exec.then((p) => p?.discard());
  }

  private async execWithRecovery(command: string, options: ExecuteOptions, signal: AbortSignal): Promise<EngineExecResult> {
    const execOptions = { ...this.execBase(options.env), timeoutMs: options.timeoutMs ?? this.opts.defaultTimeoutMs, signal };
    for (let attempt = 0; ; attempt++) {
      const id = await this.opts.container.ensure();
      const prepared = await this.takeWarm(id, execKey(execOptions));
      if (prepared) this.execStats.warm++;
      else this.execStats.cold++;
      let res: EngineExecResult;
      try {
        res = await this.opts.engine.exec(id, command, execOptions, prepared);
      } catch (err) {
        if (attempt === 0 && err instanceof DockerError && CONTAINER_GONE.has(err.code)) {
          // Killed, OOM at pid 1, removed by hand, daemon restarted: a fresh container with the same mounts, then run again.
          this.opts.container.lost(id);
          continue;
        }
        throw err;
      }
      if (attempt === 0 && res.started === false && !res.timedOut && !res.aborted) {
        // The exec ended before the command started (a prepared one in a container that died meanwhile): run it again, in a fresh container if this one is gone.
        const state = await this.opts.engine.inspectContainer(id).catch(() => null);
        if (!state?.running) this.opts.container.lost(id);
        continue;
      }
      if (res.exitCode === -1 || (res.exitCode === 137 && !res.timedOut && !res.aborted)) await this.checkAlive(id, res);
      // Once this command is done (started alongside, it would compete with the command for the daemon and the CPU).
      this.prepareNext(id);
      return res;
    }
  }

  /** After an abnormal end: if the container itself died, say so and have the next command recreate it. */
  private async checkAlive(id: string, res: EngineExecResult): Promise<void> {
    const state = await this.opts.engine.inspectContainer(id).catch(() => null);
    if (state?.running) return;
    this.opts.container.lost(id);
    const why = state?.oomKilled ? "was killed for exceeding its memory limit" : "stopped";
    res.stderr = `${res.stderr}${res.stderr && !res.stderr.endsWith("\n") ? "\n" : ""}[sandbox container ${why} during the command; the next command gets a fresh one]\n`;
  }
}
