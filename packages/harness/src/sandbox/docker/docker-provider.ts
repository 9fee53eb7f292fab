import { stat } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { SandboxError } from "../../errors";
import { sandboxRunAs } from "../bwrap-provider";
import { parseSandboxConfig } from "../../config/sandbox-config";
import type { SandboxConfig } from "../../config/sandbox-config";
import { DEFAULT_USER_ID, validateId } from "../ids";
import { threadDirs } from "../thread-paths";
import type { AcquireOptions, Sandbox, SandboxProvider } from "../types";
import { buildContainerSpec, containerIdFor, containerName, LABELS, MANAGED_BY, validateMounts } from "./container-spec";
import type { ContainerDirs, OwnerIdentity } from "./container-spec";
import { DockerSandbox } from "./docker-sandbox";
import type { ContainerHandle } from "./docker-sandbox";
import { DockerEngine } from "./engine";
import { DockerError } from "./errors";
import { ContainerEgress } from "./container-egress";
import { findBinary } from "../bwrap/find-binary";
import { EgressPolicy } from "../network/policy";
import { currentOwner, ownerIsDead, reclaimOrphans, reclaimPoolDirs, removeThreadContainer } from "./orphans";
import { WarmPool } from "./warm-pool";
import { DEFAULT_DOCKER_IMAGE, MAX_SWEEP_INTERVAL_MS, POOL_DIR } from "./docker-provider-options";
import type { DockerProviderOptions } from "./docker-provider-options";

export { DEFAULT_DOCKER_IMAGE, DOCKER_PROVIDER_NAMES, MAX_SWEEP_INTERVAL_MS, POOL_DIR } from "./docker-provider-options";
export type { DockerProviderOptions } from "./docker-provider-options";

interface Entry {
  id: string;
  userId: string;
  threadId: string;
  name: string;
  sandbox: DockerSandbox;
  leases: number;
  /** When the last lease ended (`Date.now()`); undefined while leased. */
  idleSince?: number;
  containerId?: string;
  /** A container given out before and found dead: removed before the next one is created. */
  stale?: string;
  creating?: Promise<string>;
  /** The container belongs to another live process (same thread on another server): used, never removed. */
  adopted: boolean;
  /** Identity (dev:ino) of every directory the container binds, when it was created (see {@link bindIdentity}). */
  bindIdentity?: string;
  released: boolean;
  /** This sandbox's egress proxy and forwarder (allowlist / open modes). */
  egress?: ContainerEgress;
}

/**
 * One hardened container per user+thread (see `container-spec.ts`), commands
 * via exec, file tools on the host over the bind-mounted thread dirs. Leases
 * are shared with sub-agents; after the last one ends the container stays
 * warm for `idle_timeout` seconds (a returning thread re-acquires it without
 * any Docker call) and is then removed. `replicas` containers are kept ready:
 * idle ones of released threads plus pre-created {@link WarmPool} slots for
 * new threads; above it the oldest slot, then the oldest idle thread, goes.
 * Containers left by a dead server process are reclaimed at start and on
 * every sweep; `shutdown()` removes every container this instance started.
 * @throws SandboxError at construction for a network mode it cannot enforce, ConfigError for bad mounts.
 */
export class DockerSandboxProvider implements SandboxProvider {
  readonly kind = "docker";
  readonly config: SandboxConfig;
  readonly engine: DockerEngine;
  readonly image: string;
  readonly owner: OwnerIdentity;
  /** uid/gid of every process in the containers. */
  readonly runAs: { uid: number; gid: number };
  private readonly chownDirs: boolean;
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();
  private readonly pool?: WarmPool;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly ready: Promise<void>;
  private closed = false;
  private refilling: Promise<void> = Promise.resolve();
  private lastUser = DEFAULT_USER_ID;
  private poolBroken = false;
  /** The `sandbox.network` policy every sandbox's egress proxy applies (absent in `isolated` mode). */
  readonly egressPolicy?: EgressPolicy;
  private nsenterPath?: string;

  constructor(
    config: SandboxConfig | undefined,
    private readonly options: DockerProviderOptions,
  ) {
    this.config = config ?? parseSandboxConfig({});
    if (this.config.network.mode !== "isolated") {
      // The forwarder is entered into each container's network namespace: that takes root (CAP_SYS_ADMIN) and nsenter.
      const nsenter = findBinary("nsenter");
      const root = typeof process.getuid === "function" && process.getuid() === 0;
      if (!root || !nsenter) {
        throw new SandboxError(
          `sandbox.network mode '${this.config.network.mode}' with the Docker sandbox needs the service to run as root with nsenter (util-linux) installed, to reach each container's network namespace; ${root ? "nsenter was not found" : "this service is not root"}. Use 'isolated' (no network) or run as root`,
          { code: "sandbox_network_unsupported", details: { key: "sandbox.network", mode: this.config.network.mode } },
        );
      }
      this.nsenterPath = nsenter;
      this.egressPolicy = new EgressPolicy(this.config.network, { resolver: options.networkResolver });
    }
    validateMounts(this.config.mounts, { skillsContainerPath: options.skillsContainerPath });
    this.engine = options.engine ?? new DockerEngine();
    this.image = this.config.image ?? DEFAULT_DOCKER_IMAGE;
    this.owner = currentOwner();
    const dropped = sandboxRunAs(this.config);
    this.chownDirs = dropped !== undefined;
    this.runAs = dropped ?? { uid: process.getuid?.() ?? 1000, gid: process.getgid?.() ?? 1000 };
    if (this.config.replicas > 0) {
      this.pool = new WarmPool({
        engine: this.engine,
        dir: path.join(options.baseDir, POOL_DIR, this.owner.instanceId),
        prefix: this.config.container_prefix,
        owner: this.chownDirs ? this.runAs : undefined,
        spec: (name, dirs) => this.spec(name, "pool", dirs),
        wanted: () => this.idleEntries().length + (this.pool?.ready ?? 0) < this.config.replicas,
        log: options.log,
      });
    }
    const idleMs = this.config.idle_timeout * 1000;
    const period = options.sweepIntervalMs ?? Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(1000, idleMs > 0 ? idleMs / 4 : MAX_SWEEP_INTERVAL_MS));
    this.sweepTimer = setInterval(() => void this.sweep(), period);
    this.sweepTimer.unref();
    this.ready = this.reclaim().then(() => this.balance());
  }

  private log(message: string): void {
    (this.options.log ?? console.warn)(`[deerflow] sandbox: ${message}`);
  }

  /** Deterministic sandbox id of a (user, thread). */
  sandboxId(threadId: string, userId: string = DEFAULT_USER_ID): string {
    return `docker:${validateId("user", userId)}:${validateId("thread", threadId)}`;
  }

  /** `{container_prefix}-{16 hex}` of a (user, thread). */
  containerNameFor(threadId: string, userId: string = DEFAULT_USER_ID): string {
    return containerName(this.config.container_prefix, containerIdFor(userId, threadId));
  }

  private skillsFor(userId: string): string | undefined {
    const p = typeof this.options.skillsPath === "function" ? this.options.skillsPath(userId) : this.options.skillsPath;
    return p ? path.resolve(p) : undefined;
  }

  private spec(name: string, role: "thread" | "pool", dirs: ContainerDirs, ids?: { userId: string; threadId: string }) {
    // Missing custom mount sources are skipped, as bwrap's --bind-try does (Docker would create them as root).
    const config = { ...this.config, mounts: this.config.mounts.filter((m) => existsSync(m.host_path)) };
    const skills = dirs.skills && existsSync(dirs.skills) ? dirs.skills : undefined;
    return buildContainerSpec({
      config,
      image: this.image,
      name,
      role,
      userId: ids?.userId,
      threadId: ids?.threadId,
      dirs: { ...dirs, skills, skillsContainerPath: this.options.skillsContainerPath },
      runAs: this.runAs,
      owner: this.owner,
    });
  }

  async acquire(threadId: string, options: AcquireOptions = {}): Promise<string> {
    if (this.closed) throw new SandboxError("Sandbox provider is shut down", { code: "sandbox_provider_closed" });
    const userId = options.userId ?? DEFAULT_USER_ID;
    const id = this.sandboxId(threadId, userId);
    const existing = this.entries.get(id);
    if (existing) {
      existing.leases++;
      existing.idleSince = undefined;
      return id;
    }
    let creating = this.pending.get(id);
    if (!creating) {
      creating = this.open(id, threadId, userId);
      this.pending.set(id, creating);
      const settled = creating;
      settled.then(
        (entry) => {
          this.pending.delete(id);
          if (this.closed) return void this.drop(entry);
          this.entries.set(id, entry);
        },
        () => this.pending.delete(id),
      );
    }
    const entry = await creating;
    if (this.closed) throw new SandboxError("Sandbox provider is shut down", { code: "sandbox_provider_closed" });
    entry.leases++;
    entry.idleSince = undefined;
    void this.balance();
    return id;
  }

  private async open(id: string, threadId: string, userId: string): Promise<Entry> {
    await this.ready;
    this.lastUser = userId;
    const dirs = threadDirs(this.options.baseDir, threadId, userId);
    const skillsPath = this.skillsFor(userId);
    const entry: Entry = {
      id,
      userId,
      threadId,
      name: this.containerNameFor(threadId, userId),
      leases: 0,
      adopted: false,
      released: false,
      sandbox: undefined as unknown as DockerSandbox,
      egress: this.egressPolicy && this.nsenterPath ? new ContainerEgress({ policy: this.egressPolicy, runAs: this.runAs, nsenterPath: this.nsenterPath, setprivPath: findBinary("setpriv") }) : undefined,
    };
    const handle: ContainerHandle = { ensure: () => this.ensure(entry), lost: (cid) => this.lost(entry, cid) };
    entry.sandbox = new DockerSandbox({
      id,
      dirs,
      skillsPath,
      skillsContainerPath: this.options.skillsContainerPath,
      mounts: this.config.mounts,
      diskQuotaBytes: this.config.limits.disk_quota_bytes,
      engine: this.engine,
      container: handle,
      runAs: this.runAs,
      chownDirs: this.chownDirs,
      defaultTimeoutMs: this.config.bash_command_timeout * 1000,
      maxOutputBytes: this.config.max_output_bytes,
      environment: this.config.environment,
      networkEnv: entry.egress?.env(),
    });
    // A pool slot must be taken before the thread dirs exist (its own dirs become them).
    const warm = this.pool && !this.poolBroken ? await this.pool.take(dirs, skillsPath && existsSync(skillsPath) ? skillsPath : undefined, entry.name) : undefined;
    await entry.sandbox.init();
    if (warm) {
      entry.containerId = warm;
      entry.bindIdentity = await this.bindIdentity(entry);
    }
    try {
      await this.ensure(entry);
    } catch (err) {
      await this.drop(entry);
      throw err;
    }
    return entry;
  }

  /**
   * dev:ino of the thread dirs and the skills dir. A bind follows the directory it was made from, so when one is
   * replaced — the skills view is rebuilt and swapped in by rename, a deleted thread's dirs are made anew — the
   * container would show the old one: it is recreated before the next command.
   */
  private async bindIdentity(entry: Entry): Promise<string> {
    const { workspace, uploads, outputs } = entry.sandbox.dirs;
    const skills = entry.sandbox.skillsHostPath;
    const ids = await Promise.all(
      [workspace, uploads, outputs, skills].map(async (p) => {
        if (!p) return "none";
        const s = await stat(p).catch(() => undefined);
        return s ? `${s.dev}:${s.ino}` : "missing";
      }),
    );
    return ids.join("/");
  }

  /** A running container for `entry`: the current one, or a new one (after a loss or a skills view swap). */
  private async ensure(entry: Entry): Promise<string> {
    if (entry.released) throw new SandboxError(`Sandbox ${entry.id} was released`, { code: "sandbox_unavailable" });
    if (entry.containerId && entry.sandbox.inFlight <= 1 && !entry.adopted) {
      // A bound directory was replaced (see bindIdentity): recreate, when no other command runs in the container.
      const now = await this.bindIdentity(entry);
      if (entry.bindIdentity !== undefined && now !== entry.bindIdentity) {
        if (now.includes("missing")) await entry.sandbox.recreateDirs();
        this.lost(entry, entry.containerId);
      }
    }
    let id = entry.containerId;
    if (!id) {
      if (!entry.creating) {
        const creating = this.createFor(entry).finally(() => {
          if (entry.creating === creating) entry.creating = undefined;
        });
        entry.creating = creating;
      }
      id = await entry.creating;
    }
    // Another server's container has that server's forwarder already.
    if (entry.egress && !entry.adopted) {
      const cid = id;
      await entry.egress.attach(cid, async () => (await this.engine.inspectContainer(cid))?.pid ?? 0);
    }
    return id;
  }

  private lost(entry: Entry, containerId: string): void {
    if (entry.containerId !== containerId) return;
    entry.containerId = undefined;
    entry.egress?.detach();
    if (!entry.adopted) entry.stale = containerId;
    entry.adopted = false;
  }

  private async createFor(entry: Entry): Promise<string> {
    if (entry.stale) {
      await this.engine.removeContainer(entry.stale).catch(() => false);
      entry.stale = undefined;
    }
    const skillsPath = entry.sandbox.skillsHostPath;
    const identity = await this.bindIdentity(entry);
    const spec = this.spec(entry.name, "thread", { ...entry.sandbox.dirs, skills: skillsPath }, { userId: entry.userId, threadId: entry.threadId });
    let containerId: string | undefined;
    for (let attempt = 0; containerId === undefined; attempt++) {
      try {
        containerId = await this.engine.createContainer(spec);
      } catch (err) {
        if (!(err instanceof DockerError) || err.code !== "docker_conflict" || attempt > 0) throw err;
        const existing = await this.engine.inspectContainer(entry.name);
        if (existing?.running && existing.labels[LABELS.managedBy] === MANAGED_BY && existing.labels[LABELS.instance] !== this.owner.instanceId && !ownerIsDead(existing.labels, this.owner.hostname)) {
          // Another live server process runs this thread's sandbox: share it; it stays that process's to remove.
          entry.adopted = true;
          entry.containerId = existing.id;
          return existing.id;
        }
        if (existing) await this.engine.removeContainer(existing.id);
      }
    }
    try {
      await this.engine.startContainer(containerId);
    } catch (err) {
      await this.engine.removeContainer(containerId).catch(() => false);
      throw err;
    }
    if (entry.released || this.closed) {
      await this.engine.removeContainer(containerId).catch(() => false);
      throw new SandboxError(`Sandbox ${entry.id} was released`, { code: "sandbox_unavailable" });
    }
    this.poolBroken = false;
    entry.adopted = false;
    entry.bindIdentity = identity;
    entry.containerId = containerId;
    return containerId;
  }

  get(id: string): Sandbox | undefined {
    return this.entries.get(id)?.sandbox;
  }

  leaseCount(id: string): number {
    return this.entries.get(id)?.leases ?? 0;
  }

  /** Drop one lease; after the last one the container stays warm until `idle_timeout` (or `replicas` needs room). */
  async release(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.leases === 0) return;
    entry.leases--;
    if (entry.leases === 0) {
      entry.idleSince = Date.now();
      await this.balance();
    }
  }

  /**
   * The thread was deleted: remove its container now, leased or idle (the caller made sure no run of it is in
   * flight), instead of at the idle timeout. One still being created is awaited first. Without an entry here the
   * thread's container by name is removed when its labels say it is ours and this thread's (another server process
   * of the same deployment may have created it; that one re-creates it only if the thread is used again).
   */
  async discardThread(threadId: string, options: AcquireOptions = {}): Promise<void> {
    const userId = options.userId ?? DEFAULT_USER_ID;
    const id = this.sandboxId(threadId, userId);
    await this.pending.get(id)?.catch(() => undefined);
    const entry = this.entries.get(id);
    if (entry) {
      await this.drop(entry);
      if (!entry.adopted) return;
    }
    if (this.closed) return;
    const name = this.containerNameFor(threadId, userId);
    try {
      await removeThreadContainer(this.engine, name, { threadId, userId });
    } catch (err) {
      this.log(`could not remove container ${name} of deleted thread ${threadId}: ${(err as Error).message}`);
    }
  }

  /** Container name of a live sandbox (tests, diagnostics). */
  containerOf(id: string): { name: string; containerId?: string; adopted: boolean } | undefined {
    const e = this.entries.get(id);
    return e && { name: e.name, containerId: e.containerId, adopted: e.adopted };
  }

  /** Names of the pre-created warm containers (tests, diagnostics). */
  poolNames(): string[] {
    return this.pool?.names() ?? [];
  }

  /** Run one idle / orphan sweep now (the timer does it periodically). */
  async sweep(): Promise<void> {
    if (this.closed) return;
    const limit = this.config.idle_timeout * 1000;
    if (limit > 0) {
      const now = Date.now();
      const expired = [...this.entries.values()].filter((e) => e.leases === 0 && e.idleSince !== undefined && now - e.idleSince >= limit);
      await Promise.all(expired.map((e) => this.drop(e)));
    }
    await this.reclaim();
    await this.balance();
  }

  private async reclaim(): Promise<void> {
    try {
      const removed = await reclaimOrphans(this.engine, this.owner);
      if (removed.length) this.log(`removed ${removed.length} container(s) left by a dead server process: ${removed.join(", ")}`);
      await reclaimPoolDirs(this.engine, path.join(this.options.baseDir, POOL_DIR), this.owner.instanceId);
    } catch (err) {
      this.log(`orphan check failed: ${(err as Error).message}`);
    }
  }

  /** Remove a sandbox and its container now. */
  private async drop(entry: Entry): Promise<void> {
    if (this.entries.get(entry.id) === entry) this.entries.delete(entry.id);
    entry.released = true;
    await entry.sandbox.dispose();
    await entry.egress?.close();
    await entry.creating?.catch(() => undefined);
    const ids = [entry.containerId, entry.stale].filter((c): c is string => c !== undefined);
    entry.containerId = undefined;
    if (entry.adopted) return;
    await Promise.all(ids.map((c) => this.engine.removeContainer(c).catch((err: unknown) => this.log(`could not remove container ${entry.name}: ${(err as Error).message}`))));
  }

  /** Keep at most `replicas` containers beyond the leased ones (oldest pool slot, then oldest idle thread, go first), then refill the pool in the background. */
  private async balance(): Promise<void> {
    if (this.closed) return;
    const replicas = this.config.replicas;
    // Ready slots only: one still being created checks `wanted` when it is done.
    while (this.idleEntries().length + (this.pool?.ready ?? 0) > replicas) {
      if (this.pool && (await this.pool.evictOne())) continue;
      const oldest = this.idleEntries()[0];
      if (!oldest) break;
      await this.drop(oldest);
    }
    this.refilling = this.refill();
  }

  /** Resolves once the start-up orphan check and the current warm-pool refill are done (tests, benchmarks). */
  async settled(): Promise<void> {
    await this.ready;
    await this.refilling;
  }

  private idleEntries(): Entry[] {
    return [...this.entries.values()].filter((e) => e.leases === 0 && e.idleSince !== undefined).sort((a, b) => (a.idleSince ?? 0) - (b.idleSince ?? 0));
  }

  private async refill(): Promise<void> {
    if (!this.pool || this.poolBroken || this.closed) return;
    const room = this.config.replicas - this.idleEntries().length;
    const skills0 = this.skillsFor(this.lastUser);
    if (room <= this.pool.size && this.pool.fits(skills0 && existsSync(skills0) ? skills0 : undefined)) return;
    try {
      await this.engine.requireImage(this.image);
    } catch (err) {
      this.poolBroken = true;
      this.log(`warm pool disabled until a sandbox container can be created: ${(err as Error).message}`);
      return;
    }
    const skills = this.skillsFor(this.lastUser);
    const fits = skills && existsSync(skills) ? skills : undefined;
    await this.pool.evictMismatched(fits);
    await this.pool.fill(room, fits);
  }

  /** Remove every container this instance started (pool slots, idle and leased sandboxes). */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    await this.ready.catch(() => undefined);
    await Promise.allSettled([...this.pending.values()]);
    await this.pool?.drain();
    await Promise.all([...this.entries.values()].map((e) => this.drop(e)));
    // Anything of this instance still there (a create that raced a failure) goes too.
    try {
      const left = await this.engine.listContainers({ [LABELS.instance]: this.owner.instanceId });
      await Promise.all(left.map((c) => this.engine.removeContainer(c.id).catch(() => false)));
    } catch (err) {
      this.log(`could not list containers at shutdown: ${(err as Error).message}`);
    }
  }
}
