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
export { SandboxFiles, standardMounts } from "./sandbox-files";
export type { BytesExec, SandboxMountPoint } from "./sandbox-files";
export { DockerBackend, PROVISIONER_LABELS } from "./docker/docker-backend";
export type { DockerBackendOptions } from "./docker/docker-backend";
