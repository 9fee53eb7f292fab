/**
 * Docker sandbox tier: a typed Engine API client, the hardened container
 * spec, the sandbox (commands via exec, file tools on the host over the
 * bind-mounted thread dirs) and its provider. See docs/sandbox.md.
 */
export { connectDocker, DockerEngine } from "./engine";
export type { ContainerState, ContainerSummary, DockerEngineOptions, EngineExecOptions, EngineExecResult } from "./engine";
export { DockerError, maskEndpoint, toDockerError } from "./errors";
export type { DockerErrorCode } from "./errors";
export {
  buildContainerSpec,
  containerIdFor,
  containerName,
  DEFAULT_CONTAINER_PREFIX,
  KEEPALIVE_CMD,
  LABELS,
  MANAGED_BY,
  sandboxEnv,
  validateMounts,
} from "./container-spec";
export type { ContainerDirs, ContainerSpecInput, OwnerIdentity } from "./container-spec";
