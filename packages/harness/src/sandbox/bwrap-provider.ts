import { SandboxError } from "../errors";
import type { SandboxConfig } from "../config/sandbox-config";
import { parseSandboxConfig } from "../config/sandbox-config";
import { BwrapSandbox } from "./bwrap-sandbox";
import { bindStrategy, probeBwrapDataDir } from "./bwrap/data-dir-probe";
import type { BwrapDataDirProbe } from "./bwrap/data-dir-probe";
import type { StageTools } from "./bwrap/staging";
import { LeaseRegistryProvider } from "./lease-registry";
import { EgressPolicy } from "./network/policy";
import type { HostResolver } from "../web-research/ssrf-guard";
import { resolveSandboxLimits } from "./limits/effective";
import type { EffectiveLimits } from "./limits/effective";
import type { CgroupSupport } from "./limits/cgroups";
import { threadDirs } from "./thread-paths";

/** Options of {@link BwrapSandboxProvider}. */
export interface BwrapProviderOptions {
  baseDir: string;
  /** Host skills directory bound read-only, or one per user (the skills registry's enabled-only view, under `baseDir`). */
  skillsPath?: string | ((userId: string) => string);
  skillsContainerPath?: string;
  /** Override the bwrap binary (tests). */
  bwrapPath?: string;
  /** Override cgroup detection, e.g. `{ version: null, parents: {}, notes: [] }` for the rlimit fallback (tests). */
  cgroups?: CgroupSupport;
  /** Resolver of the egress proxy (code only: tests simulate DNS answers with it; default the system resolver). */
  networkResolver?: HostResolver;
}

/** The uid/gid commands run as: the configured unprivileged uid when the service is root, else unchanged. */
export function sandboxRunAs(config: SandboxConfig): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return undefined;
  return { uid: config.run_as_uid, gid: config.run_as_gid ?? config.run_as_uid };
}

/**
 * Runs each command in bubblewrap with a minimal read-only root, only the
 * thread's directories bound, new namespaces, no network (by default), a
 * cleared environment, no capabilities, prlimit limits and — when the
 * service is root — an unprivileged uid. At construction it starts one real
 * sandbox against the data dir (see {@link probeBwrapDataDir}), so a data dir
 * the sandbox uid cannot reach is refused up front, by name, instead of
 * failing every later command.
 * @throws SandboxError when bwrap cannot run on this machine or cannot bind the data dir.
 */
export class BwrapSandboxProvider extends LeaseRegistryProvider<BwrapSandbox> {
  readonly kind = "bwrap";
  readonly config: SandboxConfig;
  readonly probe: BwrapDataDirProbe;
  /** Set when bind sources are staged in a private mount namespace (a directory above them is closed to the sandbox uid). */
  readonly stage?: StageTools;
  private readonly runAs?: { uid: number; gid: number };
  /** The `sandbox.network` policy every sandbox's egress proxy applies (absent in `isolated` mode). */
  readonly egressPolicy?: EgressPolicy;
  /** How `sandbox.limits` is enforced on this machine (cgroups or rlimits; see {@link resolveSandboxLimits}). */
  readonly limits: EffectiveLimits;

  constructor(
    config: SandboxConfig | undefined,
    private readonly options: BwrapProviderOptions,
  ) {
    super();
    this.config = config ?? parseSandboxConfig({});
    this.runAs = sandboxRunAs(this.config);
    this.probe = probeBwrapDataDir({ baseDir: options.baseDir, runAs: this.runAs, bwrapPath: options.bwrapPath });
    if (!this.probe.ok || !this.probe.bwrapPath) {
      throw new SandboxError(`bubblewrap sandbox is not usable: ${this.probe.reason}`, { code: "sandbox_unavailable", details: { baseDir: this.probe.baseDir, blocker: this.probe.blocker } });
    }
    const extraHosts = [...(typeof options.skillsPath === "string" ? [options.skillsPath] : []), ...this.config.mounts.map((m) => m.host_path)];
    // Network modes bind the node binary that runs the forwarder (when it lives outside /usr, e.g. under /root/.nvm).
    if (this.config.network.mode !== "isolated" && !process.execPath.startsWith("/usr/")) extraHosts.push(process.execPath);
    const strategy = bindStrategy(options.baseDir, this.runAs, extraHosts);
    if (strategy.blocker && !strategy.stage) {
      throw new SandboxError(`bubblewrap sandbox is not usable: the sandbox uid cannot enter ${strategy.blocker} and unshare/mount are missing`, {
        code: "sandbox_unavailable",
        details: { blocker: strategy.blocker },
      });
    }
    this.stage = strategy.stage;
    if (this.config.network.mode !== "isolated") this.egressPolicy = new EgressPolicy(this.config.network, { resolver: options.networkResolver });
    this.limits = resolveSandboxLimits(this.config, { runAs: this.runAs, bwrapPath: this.probe.bwrapPath, prlimitAvailable: this.probe.prlimitPath !== undefined, cgroups: options.cgroups });
  }

  protected create(id: string, threadId: string, userId: string): BwrapSandbox {
    return new BwrapSandbox({
      id,
      baseDir: this.options.baseDir,
      dirs: threadDirs(this.options.baseDir, threadId, userId),
      skillsPath: typeof this.options.skillsPath === "function" ? this.options.skillsPath(userId) : this.options.skillsPath,
      skillsContainerPath: this.options.skillsContainerPath,
      mounts: this.config.mounts,
      bwrapPath: this.probe.bwrapPath as string,
      prlimitPath: this.probe.prlimitPath,
      setprivPath: this.probe.setprivPath,
      runAs: this.runAs,
      stage: this.stage,
      network: this.config.network,
      egressPolicy: this.egressPolicy,
      limits: this.limits.rlimits,
      cgroup: this.limits.cgroup,
      tmpSizeBytes: this.limits.tmpSizeBytes,
      diskQuotaBytes: this.limits.diskQuotaBytes,
      defaultTimeoutMs: this.config.bash_command_timeout * 1000,
      maxOutputBytes: this.config.max_output_bytes,
      environment: this.config.environment,
    });
  }
}
