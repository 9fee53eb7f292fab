import type { V1NetworkPolicy, V1Pod, V1Service } from "@kubernetes/client-node";
import { KEEPALIVE_CMD, SandboxError, sandboxEnv, VIRTUAL_OUTPUTS, VIRTUAL_SKILLS, VIRTUAL_UPLOADS, VIRTUAL_WORKSPACE } from "@deerflow-ts/harness";
import type { CreateSandboxRequest, SandboxConfig } from "@deerflow-ts/harness";

/** Labels and annotations of every object the Kubernetes backend creates (DeerFlow's labels plus ours). */
export const K8S_LABELS = {
  app: "deer-flow-sandbox",
  sandboxId: "sandbox-id",
  name: "app.kubernetes.io/name",
  component: "app.kubernetes.io/component",
  managedBy: "app.kubernetes.io/managed-by",
} as const;
export const K8S_ANNOTATIONS = {
  tokenNonce: "deerflow.provisioner/token-nonce",
  user: "deerflow.provisioner/user-id",
  thread: "deerflow.provisioner/thread-id",
} as const;

/** The single container of a sandbox Pod. */
export const SANDBOX_CONTAINER = "sandbox";
/** Port named `http` on the Service (DeerFlow's 8080); see {@link buildService}. */
export const SANDBOX_PORT = 8080;

/** What the manifests are built from. */
export interface ManifestSettings {
  namespace: string;
  image: string;
  imagePullPolicy: "Always" | "IfNotPresent" | "Never";
  /** Limits, uid/gid, environment and network mode of the sandboxes. */
  config: SandboxConfig;
  /** Node path of the skills bound read-only at /mnt/skills (hostPath), if any. */
  skillsHostPath?: string;
  serviceType: "ClusterIP" | "NodePort";
}

/** `sandbox-{id}` (DeerFlow's Pod name). */
export function podName(sandboxId: string): string {
  return `sandbox-${sandboxId}`;
}
/** `sandbox-{id}-svc` (DeerFlow's Service name). */
export function serviceName(sandboxId: string): string {
  return `sandbox-${sandboxId}-svc`;
}
/** `sandbox-{id}-netpol`. */
export function networkPolicyName(sandboxId: string): string {
  return `sandbox-${sandboxId}-netpol`;
}

function labelsOf(sandboxId: string): Record<string, string> {
  return {
    app: K8S_LABELS.app,
    [K8S_LABELS.sandboxId]: sandboxId,
    [K8S_LABELS.name]: "deer-flow",
    [K8S_LABELS.component]: "sandbox",
    [K8S_LABELS.managedBy]: "deerflow-provisioner",
  };
}

function quantityBytes(n: number): string {
  return String(Math.max(1, Math.floor(n)));
}

/**
 * The sandbox Pod, hardened: non-root uid/gid (`runAsNonRoot`), every
 * capability dropped, no privilege escalation, the runtime's default seccomp
 * profile, a read-only root filesystem (writable: a memory `/tmp` and the
 * three user-data dirs, each an `emptyDir` bounded by the disk quota), no
 * service-account token, no service links, resource limits from
 * `sandbox.limits`, and the keep-alive command (any image with `/bin/sh`).
 */
export function buildPod(req: CreateSandboxRequest, tokenNonce: string, s: ManifestSettings): V1Pod {
  const limits = s.config.limits;
  const uid = s.config.run_as_uid;
  const gid = s.config.run_as_gid ?? uid;
  const annotations: Record<string, string> = { [K8S_ANNOTATIONS.tokenNonce]: tokenNonce, [K8S_ANNOTATIONS.user]: req.user_id };
  if (req.thread_id) annotations[K8S_ANNOTATIONS.thread] = req.thread_id;
  const dataLimit = limits.disk_quota_bytes > 0 ? { sizeLimit: quantityBytes(limits.disk_quota_bytes) } : {};
  const volumes: NonNullable<NonNullable<V1Pod["spec"]>["volumes"]> = [
    { name: "tmp", emptyDir: { medium: "Memory", ...(limits.tmp_size_bytes > 0 ? { sizeLimit: quantityBytes(limits.tmp_size_bytes) } : {}) } },
    { name: "workspace", emptyDir: { ...dataLimit } },
    { name: "uploads", emptyDir: { ...dataLimit } },
    { name: "outputs", emptyDir: { ...dataLimit } },
  ];
  const mounts = [
    { name: "tmp", mountPath: "/tmp" },
    { name: "workspace", mountPath: VIRTUAL_WORKSPACE },
    { name: "uploads", mountPath: VIRTUAL_UPLOADS },
    { name: "outputs", mountPath: VIRTUAL_OUTPUTS },
  ];
  if (s.skillsHostPath) {
    volumes.push({ name: "skills", hostPath: { path: s.skillsHostPath, type: "Directory" } });
    mounts.push({ name: "skills", mountPath: VIRTUAL_SKILLS, readOnly: true } as (typeof mounts)[number]);
  }
  const resourceLimits: Record<string, string> = {};
  const requests: Record<string, string> = {};
  if (limits.cpu_cores > 0) {
    resourceLimits.cpu = `${Math.max(1, Math.round(limits.cpu_cores * 1000))}m`;
    requests.cpu = `${Math.max(1, Math.min(100, Math.round(limits.cpu_cores * 1000)))}m`;
  }
  if (limits.memory_bytes > 0) {
    resourceLimits.memory = quantityBytes(limits.memory_bytes);
    requests.memory = quantityBytes(Math.min(limits.memory_bytes, 256 * 1024 * 1024));
  }
  if (limits.disk_quota_bytes > 0) resourceLimits["ephemeral-storage"] = quantityBytes(limits.disk_quota_bytes * 3 + limits.tmp_size_bytes);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: podName(req.sandbox_id), namespace: s.namespace, labels: labelsOf(req.sandbox_id), annotations },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: "Always",
      securityContext: {
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: gid,
        fsGroup: gid,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: SANDBOX_CONTAINER,
          image: s.image,
          imagePullPolicy: s.imagePullPolicy,
          command: [...KEEPALIVE_CMD],
          workingDir: VIRTUAL_WORKSPACE,
          env: sandboxEnv(s.config.environment).map((e) => {
            const i = e.indexOf("=");
            return { name: e.slice(0, i), value: e.slice(i + 1) };
          }),
          ports: [{ name: "http", containerPort: SANDBOX_PORT, protocol: "TCP" }],
          resources: { limits: resourceLimits, requests },
          securityContext: {
            runAsNonRoot: true,
            runAsUser: uid,
            runAsGroup: gid,
            privileged: false,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
          volumeMounts: mounts,
        },
      ],
      volumes,
    },
  };
}

/**
 * DeerFlow's per-sandbox Service (`sandbox-{id}-svc`, port `http`). Our
 * provisioner reaches sandboxes through the exec API, so nothing needs it;
 * it keeps DeerFlow's layout for tooling that looks sandboxes up by it, and
 * the NetworkPolicy denies all ingress to the Pod anyway.
 */
export function buildService(sandboxId: string, s: ManifestSettings): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: serviceName(sandboxId), namespace: s.namespace, labels: labelsOf(sandboxId) },
    spec: {
      type: s.serviceType,
      selector: { [K8S_LABELS.sandboxId]: sandboxId },
      ports: [{ name: "http", port: SANDBOX_PORT, targetPort: SANDBOX_PORT, protocol: "TCP" }],
    },
  };
}

/**
 * The sandbox's NetworkPolicy: no ingress at all (commands arrive through the
 * API server's exec, not the network) and no egress unless `sandbox.network`
 * is `open`. `allowlist` is refused: a NetworkPolicy cannot express host
 * names, and the egress proxy of the other tiers is not deployed in-cluster.
 * @throws SandboxError for `allowlist`.
 */
export function buildNetworkPolicy(sandboxId: string, s: ManifestSettings): V1NetworkPolicy {
  const mode = s.config.network.mode;
  if (mode === "allowlist") {
    throw new SandboxError("sandbox.network mode 'allowlist' is not supported by the Kubernetes backend; use 'isolated' (default) or 'open'", {
      code: "sandbox_network_unsupported",
      details: { key: "sandbox.network", mode },
    });
  }
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: networkPolicyName(sandboxId), namespace: s.namespace, labels: labelsOf(sandboxId) },
    spec: {
      podSelector: { matchLabels: { [K8S_LABELS.sandboxId]: sandboxId } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [],
      egress: mode === "open" ? [{}] : [],
    },
  };
}
