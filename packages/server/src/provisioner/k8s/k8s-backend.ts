import { CoreV1Api, Exec, NetworkingV1Api } from "@kubernetes/client-node";
import type { KubeConfig, V1Pod } from "@kubernetes/client-node";
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
  private readonly core: CoreV1Api;
  private readonly net: NetworkingV1Api;
  private readonly execApi: Exec;
  private readonly creating = new Map<string, Promise<BackendSandbox>>();

  constructor(private readonly options: KubernetesBackendOptions) {
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.net = options.kubeConfig.makeApiClient(NetworkingV1Api);
    this.execApi = new Exec(options.kubeConfig);
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
      await this.core.listNamespacedPod({ namespace: this.options.namespace, labelSelector: `app=${K8S_LABELS.app}`, limit: 1 });
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
      return await this.core.readNamespacedPod({ name: podName(sandboxId), namespace: this.options.namespace });
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
      const res = await this.core.listNamespacedPod({ namespace: this.options.namespace, labelSelector: `app=${K8S_LABELS.app},${K8S_LABELS.managedBy}=deerflow-provisioner` });
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
      await this.net.createNamespacedNetworkPolicy({ namespace: ns, body: policy });
    } catch (err) {
      if (statusOf(err) !== 409) throw this.fail(err, `creating networkpolicy ${networkPolicyName(req.sandbox_id)}`);
    }
    let created: V1Pod | undefined;
    try {
      created = await this.core.createNamespacedPod({ namespace: ns, body: pod });
    } catch (err) {
      if (statusOf(err) !== 409) throw this.fail(err, `creating pod ${podName(req.sandbox_id)}`);
    }
    try {
      await this.core.createNamespacedService({ namespace: ns, body: service });
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
      [`service ${serviceName(sandboxId)}`, () => this.core.deleteNamespacedService({ name: serviceName(sandboxId), namespace: ns })],
      [`pod ${podName(sandboxId)}`, () => this.core.deleteNamespacedPod({ name: podName(sandboxId), namespace: ns, gracePeriodSeconds: 0 })],
      [`networkpolicy ${networkPolicyName(sandboxId)}`, () => this.net.deleteNamespacedNetworkPolicy({ name: networkPolicyName(sandboxId), namespace: ns })],
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

  exec(sandboxId: string, command: string, options: BackendExecOptions): Promise<BackendExecResult> {
    return k8sRunCommand(this.execApi, this.options.namespace, podName(sandboxId), command, options);
  }

  execBytes(sandboxId: string, argv: string[], options: BytesExecOptions): Promise<BytesExecResult> {
    return k8sExecBytes(this.execApi, this.options.namespace, podName(sandboxId), argv, options);
  }

  async close(): Promise<void> {
    /* client-node keeps no connection between calls */
  }
}
