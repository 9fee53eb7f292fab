/**
 * Docker sandbox tier: a typed Engine API client, the hardened container
 * spec, the sandbox (commands via exec, file tools on the host over the
 * bind-mounted thread dirs) and its provider. See docs/sandbox.md.
 */
export { connectDocker, DockerEngine, execKey } from "./engine";
export type { ContainerState, ContainerSummary, DockerEngineOptions, EngineExecOptions, EngineExecResult, PreparedExec } from "./engine";
export { DockerError, maskEndpoint, toDockerError } from "./errors";
export { DOCKERODE_VERSION, loadDockerode } from "./dockerode";
export type { ModuleLoader } from "./dockerode";
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
export { DockerSandbox } from "./docker-sandbox";
export type { ContainerHandle, DockerSandboxInit } from "./docker-sandbox";
export { DEFAULT_DOCKER_IMAGE, DOCKER_PROVIDER_NAMES, DockerSandboxProvider, MAX_SWEEP_INTERVAL_MS } from "./docker-provider";
export type { DockerProviderOptions } from "./docker-provider";
export { currentOwner, ownerIsDead, processStartTime, reclaimOrphans } from "./orphans";
export { WarmPool } from "./warm-pool";
export type { WarmPoolOptions } from "./warm-pool";
export { EXEC_WRAPPER, STDIN_EXEC_WRAPPER } from "./exec-stream";
export { ContainerEgress } from "./container-egress";
export type { ContainerEgressOptions } from "./container-egress";
