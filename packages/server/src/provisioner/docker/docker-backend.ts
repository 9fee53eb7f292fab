import { mkdir } from "node:fs/promises";
import path from "node:path";
import type Docker from "dockerode";
import { loadDockerode } from "@deerflow-ts/harness/sandbox/docker";
import {
  buildContainerSpec,
  containerName,
  currentOwner,
  DockerEngine,
  ensureThreadDirs,
  LABELS,
  removeTree,
  sandboxRunAs,
  SandboxError,
} from "@deerflow-ts/harness";
import type { CreateSandboxRequest, OwnerIdentity, SandboxConfig, SandboxStatus } from "@deerflow-ts/harness";
import type { BackendExecOptions, BackendExecResult, BackendSandbox, BytesExecOptions, BytesExecResult, ProvisionerBackend } from "../backend";
import { dockerExecBytes, dockerodeOptions } from "./byte-exec";

/** Labels the provisioner adds (its containers are not the Docker tier's: that tier's orphan sweep must leave them alone). */
export const PROVISIONER_LABELS = {
  managedBy: "deerflow-provisioner",
  sandboxId: "deerflow.provisioner.sandbox-id",
  tokenNonce: "deerflow.provisioner.token-nonce",
} as const;

/** Options of {@link DockerBackend}. */
export interface DockerBackendOptions {
  /** The sandbox settings (image, limits, run_as_uid, environment, container_prefix…) every container gets. */
  config: SandboxConfig;
  /** Image reference (never pulled). */
  image: string;
  /** Where each sandbox's user-data lives on this host: `{dataDir}/sandboxes/{id}/{workspace,uploads,outputs}`. */
  dataDir: string;
  /** Host skills directory bound read-only at /mnt/skills, if any. */
  skillsDir?: string;
  /** Container name prefix (default `deer-flow-provisioned`; distinct from the Docker tier's so the two never collide). */
  containerPrefix?: string;
  /** `DOCKER_HOST`-style endpoint (default: the environment, else the local socket). */
  dockerHost?: string;
  /** Extra labels on every container (tests find and remove theirs by one). */
  labels?: Record<string, string>;
}

function statusOf(state: string, running: boolean): SandboxStatus {
  if (running) return "Running";
  switch (state) {
    case "created":
    case "restarting":
      return "Pending";
    case "exited":
    case "dead":
      return "Failed";
    default:
      return "Unknown";
  }
}

/**
 * Sandboxes as local Docker containers, hardened by the Docker tier's spec
 * (non-root, no capabilities, no-new-privileges, read-only root, limits, no
 * network), each with its own user-data directories on this host (the
 * caller's thread directories are not shared: files come and go through the
 * command API). State lives in the containers' labels, so a restarted
 * provisioner finds its sandboxes again.
 */
export class DockerBackend implements ProvisionerBackend {
  readonly kind = "docker";
  readonly engine: DockerEngine;
  private readonly docker: Docker;
  private readonly owner: OwnerIdentity;
  private readonly prefix: string;
  private readonly runAs: { uid: number; gid: number };
  private readonly chownDirs: boolean;
  private readonly creating = new Map<string, Promise<BackendSandbox>>();

  constructor(private readonly options: DockerBackendOptions) {
    this.engine = new DockerEngine({ host: options.dockerHost });
    this.docker = new (loadDockerode())(dockerodeOptions(options.dockerHost));
    this.owner = currentOwner();
    this.prefix = options.containerPrefix ?? "deer-flow-provisioned";
    const dropped = sandboxRunAs(options.config);
    this.chownDirs = dropped !== undefined;
    this.runAs = dropped ?? { uid: process.getuid?.() ?? 1000, gid: process.getgid?.() ?? 1000 };
  }

  async start(): Promise<void> {
    await this.engine.ping();
    await this.engine.requireImage(this.options.image);
    await mkdir(path.join(this.options.dataDir, "sandboxes"), { recursive: true });
  }

  private name(sandboxId: string): string {
    return containerName(this.prefix, sandboxId);
  }

  private dirsOf(sandboxId: string) {
    const userData = path.join(this.options.dataDir, "sandboxes", sandboxId, "user-data");
    return { userData, workspace: path.join(userData, "workspace"), uploads: path.join(userData, "uploads"), outputs: path.join(userData, "outputs") };
  }

  private toSandbox(labels: Record<string, string>, state: string, running: boolean): BackendSandbox | undefined {
    const sandboxId = labels[PROVISIONER_LABELS.sandboxId];
    const tokenNonce = labels[PROVISIONER_LABELS.tokenNonce];
    if (!sandboxId || !tokenNonce) return undefined;
    return { sandboxId, tokenNonce, status: statusOf(state, running), userId: labels[LABELS.user], threadId: labels[LABELS.thread] };
  }

  async get(sandboxId: string): Promise<BackendSandbox | undefined> {
    const c = await this.engine.inspectContainer(this.name(sandboxId));
    if (!c || c.labels[LABELS.managedBy] !== PROVISIONER_LABELS.managedBy) return undefined;
    return this.toSandbox(c.labels, c.status, c.running);
  }

  /**
   * This provisioner's sandboxes: its label, and named with its prefix (the one `get` and `remove` look up), so two
   * provisioners on one daemon never list — or expire — each other's.
   */
  async list(): Promise<BackendSandbox[]> {
    const all = await this.engine.listContainers({ [LABELS.managedBy]: PROVISIONER_LABELS.managedBy });
    return all
      .map((c) => ({ c, s: this.toSandbox(c.labels, c.state, c.state === "running") }))
      .filter((x): x is { c: (typeof all)[number]; s: BackendSandbox } => x.s !== undefined && x.c.name === this.name(x.s.sandboxId))
      .map((x) => x.s);
  }

  create(req: CreateSandboxRequest, tokenNonce: string): Promise<BackendSandbox> {
    // Two callers creating the same sandbox at once share one creation.
    let p = this.creating.get(req.sandbox_id);
    if (!p) {
      p = this.doCreate(req, tokenNonce).finally(() => this.creating.delete(req.sandbox_id));
      this.creating.set(req.sandbox_id, p);
    }
    return p;
  }

  private async doCreate(req: CreateSandboxRequest, tokenNonce: string): Promise<BackendSandbox> {
    const existing = await this.get(req.sandbox_id);
    if (existing?.status === "Running") return existing;
    // A stopped or dead container under this id is replaced (its files survive on the host).
    if (existing) await this.engine.removeContainer(this.name(req.sandbox_id));
    if (req.extra_mounts.length > 0) {
      throw new SandboxError("extra_mounts are not supported by this provisioner's Docker backend", { code: "extra_mounts_unsupported" });
    }
    const dirs = this.dirsOf(req.sandbox_id);
    await ensureThreadDirs(dirs, this.chownDirs ? this.runAs : undefined);
    const spec = buildContainerSpec({
      config: { ...this.options.config, mounts: [] },
      image: this.options.image,
      name: this.name(req.sandbox_id),
      role: "thread",
      userId: req.user_id,
      threadId: req.thread_id ?? undefined,
      dirs: { ...dirs, skills: this.options.skillsDir },
      runAs: this.runAs,
      owner: this.owner,
    });
    spec.Labels = { ...spec.Labels, ...(this.options.labels ?? {}), [LABELS.managedBy]: PROVISIONER_LABELS.managedBy, [PROVISIONER_LABELS.sandboxId]: req.sandbox_id, [PROVISIONER_LABELS.tokenNonce]: tokenNonce };
    await this.engine.createContainer(spec);
    try {
      await this.engine.startContainer(this.name(req.sandbox_id));
    } catch (err) {
      await this.engine.removeContainer(this.name(req.sandbox_id)).catch(() => false);
      throw err;
    }
    return { sandboxId: req.sandbox_id, tokenNonce, status: "Running", userId: req.user_id, threadId: req.thread_id ?? undefined };
  }

  async remove(sandboxId: string): Promise<boolean> {
    const known = await this.get(sandboxId);
    const removed = known ? await this.engine.removeContainer(this.name(sandboxId)) : false;
    await removeTree(path.join(this.options.dataDir, "sandboxes", sandboxId)).catch(() => {});
    return removed;
  }

  async exec(sandboxId: string, command: string, options: BackendExecOptions): Promise<BackendExecResult> {
    const res = await this.engine.exec(this.name(sandboxId), command, {
      env: options.env,
      workingDir: options.workingDir,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      maxOutputBytes: options.maxOutputBytes,
    });
    return { stdout: res.stdout, stderr: res.stderr, exitCode: res.exitCode, timedOut: res.timedOut, truncated: res.truncated };
  }

  execBytes(sandboxId: string, argv: string[], options: BytesExecOptions): Promise<BytesExecResult> {
    return dockerExecBytes(this.docker, this.name(sandboxId), argv, options);
  }

  async close(): Promise<void> {
    /* dockerode holds no persistent connection */
  }
}
