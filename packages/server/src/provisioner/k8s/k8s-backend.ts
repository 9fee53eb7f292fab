import type { CoreV1Api, Exec, KubeConfig, NetworkingV1Api, V1Pod } from "@kubernetes/client-node";
import { SANDBOX_STATUSES, SandboxError } from "@deerflow-ts/harness";
import type { CreateSandboxRequest, SandboxStatus } from "@deerflow-ts/harness";
import type { BackendExecOptions, BackendExecResult, BackendSandbox, BytesExecOptions, BytesExecResult, ProvisionerBackend } from "../backend";
import { k8sExecBytes, k8sRunCommand } from "./k8s-exec";
import { buildNetworkPolicy, buildPod, buildService, K8S_ANNOTATIONS, K8S_LABELS, networkPolicyName, podName, serviceName } from "./manifests";
import type { ManifestSettings } from "./manifests";

/** Options of {@link KubernetesBackend}. */
export interface KubernetesBackendOptions extends ManifestSettings {
  /** The cluster (kubeconfig file, in-cluster service account, or options). */
  kubeConfig: KubeConfig;
  /** How long `create` waits for the Pod to run (default 120 s). */
  readyTimeoutMs?: number;
  /** Interval of that wait (default 500 ms). */
  pollIntervalMs?: number;
}

interface KubernetesClients {
  core: CoreV1Api;
  net: NetworkingV1Api;
  execApi: Exec;
}

/**
 * `@kubernetes/client-node`, imported when the Kubernetes backend first talks
 * to a cluster. It is an optional peer dependency of the server (most
 * installs never use this backend and its install is larger than the rest of
 * the server's dependencies together); without it the error says what to install.
 */
export async function loadKubernetesClient(): Promise<typeof import("@kubernetes/client-node")> {
  try {
    return await import("@kubernetes/client-node");
  } catch (err) {
    if ((err as NodeJS.ErrnoException)?.code !== "ERR_MODULE_NOT_FOUND") throw err;
    throw new SandboxError("The Kubernetes backend needs @kubernetes/client-node, which is not installed: run `npm install @kubernetes/client-node@1.4.0` next to deerflow-ts (or use --backend docker).", {
      code: "kubernetes_client_missing",
    });
  }
}

/** The HTTP status of a client-node error (ApiException `code`), if any. */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "number" ? code : undefined;
}

function phaseOf(pod: V1Pod): SandboxStatus {
  const phase = pod.status?.phase;
  return (SANDBOX_STATUSES as readonly string[]).includes(phase ?? "") ? (phase as SandboxStatus) : "Unknown";
}

/**
 * Sandboxes as Kubernetes Pods (one Pod + Service + NetworkPolicy each, see
 * `manifests.ts`), reached through the API server's exec, so neither the
 * image nor the Pod serves anything. State lives in the Pods' labels and
 * annotations. Tested against recorded API shapes; not yet run on a live
 * cluster (docs/provisioner.md).
 */
export class KubernetesBackend implements ProvisionerBackend {
  readonly kind = "kubernetes";
  private clients: Promise<KubernetesClients> | undefined;
  private readonly creating = new Map<string, Promise<BackendSandbox>>();

  constructor(private readonly options: KubernetesBackendOptions) {}

  /** The API clients, made on first use: client-node is an optional peer dependency only this backend loads. */
  private k8s(): Promise<KubernetesClients> {
    this.clients ??= loadKubernetesClient().then(({ CoreV1Api, NetworkingV1Api, Exec }) => ({
      core: this.options.kubeConfig.makeApiClient(CoreV1Api),
      net: this.options.kubeConfig.makeApiClient(NetworkingV1Api),
      execApi: new Exec(this.options.kubeConfig),
    }));
    return this.clients;
  }

  private fail(err: unknown, what: string): SandboxError {
    if (err instanceof SandboxError) return err;
    const status = statusOf(err);
    const server = this.options.kubeConfig.getCurrentCluster()?.server ?? "(no cluster)";
    if (status === undefined) {
      return new SandboxError(`Kubernetes API at ${server} is unreachable (${what}): ${(err as Error).message}`, { code: "kubernetes_unreachable" });
    }
    if (status === 401 || status === 403) {
      return new SandboxError(`Kubernetes API refused ${what} (HTTP ${status}): the provisioner's service account needs create/get/list/delete on pods, pods/exec, services and networkpolicies in namespace ${this.options.namespace}`, {
        code: "kubernetes_forbidden",
      });
    }
    return new SandboxError(`Kubernetes API failed ${what} (HTTP ${status})`, { code: "kubernetes_error", details: { status } });
  }

  async start(): Promise<void> {
    // One cheap call proves the cluster is reachable and the namespace readable.
    try {
      await (await this.k8s()).core.listNamespacedPod({ namespace: this.options.namespace, labelSelector: `app=${K8S_LABELS.app}`, limit: 1 });
    } catch (err) {
      throw this.fail(err, `listing pods in ${this.options.namespace}`);
    }
  }

  private toSandbox(pod: V1Pod): BackendSandbox | undefined {
    const sandboxId = pod.metadata?.labels?.[K8S_LABELS.sandboxId];
    const tokenNonce = pod.metadata?.annotations?.[K8S_ANNOTATIONS.tokenNonce];
    if (!sandboxId || !tokenNonce) return undefined;
    const status = pod.metadata?.deletionTimestamp ? "Unknown" : phaseOf(pod);
    return { sandboxId, tokenNonce, status, userId: pod.metadata?.annotations?.[K8S_ANNOTATIONS.user], threadId: pod.metadata?.annotations?.[K8S_ANNOTATIONS.thread] };
  }

  private async readPod(sandboxId: string): Promise<V1Pod | undefined> {
    try {
      return await (await this.k8s()).core.readNamespacedPod({ name: podName(sandboxId), namespace: this.options.namespace });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw this.fail(err, `reading pod ${podName(sandboxId)}`);
    }
  }

  async get(sandboxId: string): Promise<BackendSandbox | undefined> {
    const pod = await this.readPod(sandboxId);
    return pod ? this.toSandbox(pod) : undefined;
  }

  async list(): Promise<BackendSandbox[]> {
    try {
      const res = await (await this.k8s()).core.listNamespacedPod({ namespace: this.options.namespace, labelSelector: `app=${K8S_LABELS.app},${K8S_LABELS.managedBy}=deerflow-provisioner` });
      return res.items.map((p) => this.toSandbox(p)).filter((s): s is BackendSandbox => s !== undefined);
    } catch (err) {
      throw this.fail(err, "listing sandbox pods");
    }
  }

  create(req: CreateSandboxRequest, tokenNonce: string): Promise<BackendSandbox> {
    let p = this.creating.get(req.sandbox_id);
    if (!p) {
      p = this.doCreate(req, tokenNonce).finally(() => this.creating.delete(req.sandbox_id));
      this.creating.set(req.sandbox_id, p);
    }
    return p;
  }

  private async doCreate(req: CreateSandboxRequest, tokenNonce: string): Promise<BackendSandbox> {
    if (req.extra_mounts.length > 0) {
      throw new SandboxError("extra_mounts are not supported by this provisioner's Kubernetes backend", { code: "extra_mounts_unsupported" });
    }
    const ns = this.options.namespace;
    // Build everything first: a refused setting fails before anything exists in the cluster.
    const pod = buildPod(req, tokenNonce, this.options);
    const policy = buildNetworkPolicy(req.sandbox_id, this.options);
    const service = buildService(req.sandbox_id, this.options);
    const existing = await this.readPod(req.sandbox_id);
    const existingSandbox = existing ? this.toSandbox(existing) : undefined;
    if (existingSandbox && (existingSandbox.status === "Failed" || existingSandbox.status === "Succeeded")) {
      await this.remove(req.sandbox_id);
    } else if (existingSandbox) {
      return this.waitRunning(req.sandbox_id, existingSandbox);
    }
    // The policy first: the Pod never runs a moment without it.
    try {
      await (await this.k8s()).net.createNamespacedNetworkPolicy({ namespace: ns, body: policy });
    } catch (err) {
      if (statusOf(err) !== 409) throw this.fail(err, `creating networkpolicy ${networkPolicyName(req.sandbox_id)}`);
    }
    let created: V1Pod | undefined;
    try {
      created = await (await this.k8s()).core.createNamespacedPod({ namespace: ns, body: pod });
    } catch (err) {
      if (statusOf(err) !== 409) throw this.fail(err, `creating pod ${podName(req.sandbox_id)}`);
    }
    try {
      await (await this.k8s()).core.createNamespacedService({ namespace: ns, body: service });
    } catch (err) {
      if (statusOf(err) !== 409) {
        await this.remove(req.sandbox_id).catch(() => false);
        throw this.fail(err, `creating service ${serviceName(req.sandbox_id)}`);
      }
    }
    const sandbox = (created && this.toSandbox(created)) ?? (await this.get(req.sandbox_id));
    if (!sandbox) throw new SandboxError(`Pod ${podName(req.sandbox_id)} vanished right after creation`, { code: "kubernetes_error" });
    return this.waitRunning(req.sandbox_id, sandbox);
  }

  /** Wait (bounded) until the Pod runs: a command sent to a Pending Pod would fail. */
  private async waitRunning(sandboxId: string, current: BackendSandbox): Promise<BackendSandbox> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 120_000);
    let s: BackendSandbox | undefined = current;
    while (s && s.status === "Pending" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, this.options.pollIntervalMs ?? 500));
      s = await this.get(sandboxId);
    }
    if (!s) throw new SandboxError(`Pod ${podName(sandboxId)} disappeared while starting`, { code: "kubernetes_error" });
    if (s.status !== "Running") {
      throw new SandboxError(`Pod ${podName(sandboxId)} is ${s.status}, not Running (image pull, scheduling or admission problem: kubectl describe pod ${podName(sandboxId)} -n ${this.options.namespace})`, {
        code: "sandbox_not_running",
      });
    }
    return s;
  }

  async remove(sandboxId: string): Promise<boolean> {
    const ns = this.options.namespace;
    let removed = false;
    const attempts: Array<[string, () => Promise<unknown>]> = [
      [`service ${serviceName(sandboxId)}`, async () => (await this.k8s()).core.deleteNamespacedService({ name: serviceName(sandboxId), namespace: ns })],
      [`pod ${podName(sandboxId)}`, async () => (await this.k8s()).core.deleteNamespacedPod({ name: podName(sandboxId), namespace: ns, gracePeriodSeconds: 0 })],
      [`networkpolicy ${networkPolicyName(sandboxId)}`, async () => (await this.k8s()).net.deleteNamespacedNetworkPolicy({ name: networkPolicyName(sandboxId), namespace: ns })],
    ];
    const errors: string[] = [];
    for (const [what, del] of attempts) {
      try {
        await del();
        if (what.startsWith("pod ")) removed = true;
      } catch (err) {
        if (statusOf(err) !== 404) errors.push(this.fail(err, `deleting ${what}`).message);
      }
    }
    if (errors.length) throw new SandboxError(`Partial cleanup of sandbox ${sandboxId}: ${errors.join("; ")}`, { code: "kubernetes_error" });
    return removed;
  }

  async exec(sandboxId: string, command: string, options: BackendExecOptions): Promise<BackendExecResult> {
    return k8sRunCommand((await this.k8s()).execApi, this.options.namespace, podName(sandboxId), command, options);
  }

  async execBytes(sandboxId: string, argv: string[], options: BytesExecOptions): Promise<BytesExecResult> {
    return k8sExecBytes((await this.k8s()).execApi, this.options.namespace, podName(sandboxId), argv, options);
  }

  async close(): Promise<void> {
    /* client-node keeps no connection between calls */
  }
}
