/**
 * `deerflow provisioner`: DeerFlow's sandbox provisioner contract served by
 * us — a management API (`/api/sandboxes`, `X-API-Key`) and every sandbox's
 * command API (per-sandbox token), over a Docker or Kubernetes backend.
 * See docs/provisioner.md.
 */
export { createProvisionerApp } from "./app";
export type { ProvisionerAppOptions } from "./app";
export { MIN_API_KEY_LENGTH, startProvisioner } from "./server";
export type { RunningProvisioner, StartProvisionerOptions } from "./server";
export type {
  BackendExecOptions,
  BackendExecResult,
  BackendSandbox,
  BytesExecOptions,
  BytesExecResult,
  ProvisionerBackend,
} from "./backend";
export { constantTimeEqual, SandboxTokens } from "./tokens";
export { DEFAULT_PROVISIONER_IDLE_TIMEOUT_S, IdleExpiry, MAX_EXPIRY_SWEEP_MS } from "./idle-expiry";
export type { IdleExpiryOptions } from "./idle-expiry";
export { SandboxFiles, standardMounts } from "./sandbox-files";
export type { BytesExec, SandboxMountPoint } from "./sandbox-files";
export { DockerBackend, PROVISIONER_LABELS } from "./docker/docker-backend";
export type { DockerBackendOptions } from "./docker/docker-backend";
export { KubernetesBackend, loadKubernetesClient } from "./k8s/k8s-backend";
export type { KubernetesBackendOptions } from "./k8s/k8s-backend";
export { buildNetworkPolicy, buildPod, buildService, K8S_ANNOTATIONS, K8S_LABELS, networkPolicyName, podName, SANDBOX_CONTAINER, serviceName } from "./k8s/manifests";
export type { ManifestSettings } from "./k8s/manifests";
export { exitCodeOf } from "./k8s/k8s-exec";
