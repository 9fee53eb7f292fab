/**
 * `@deerflow-ts/harness/app`: what the deerflow-ts CLI and gateway need from the harness beyond its root API —
 * the Docker engine and sandbox image builders behind `deerflow sandbox image` and `doctor`, the provisioner
 * client, and the config and MCP checks `run`/`chat`/`doctor` print. Published so the installed CLI and
 * server reach them by package name; an application embedding the harness rarely needs them, and they may
 * change between minor versions.
 */
export { buildContainerSpec, connectDocker, DEFAULT_DOCKER_IMAGE, DOCKER_PROVIDER_NAMES, LABELS } from "../sandbox/docker";
export type { DockerEngine } from "../sandbox/docker";
export {
  buildImageFromDebootstrap,
  buildImageFromDockerfile,
  buildImageFromHost,
  DEFAULT_SANDBOX_IMAGE,
  IMAGE_BUILD_LABEL,
  IMAGE_CONTENT_LABEL,
  SANDBOX_DOCKERFILE,
} from "../sandbox/image";
export type { BuildImageOptions, BuildLog, BuiltImage } from "../sandbox/image";
export { API_KEY_HEADER, ProvisionerClient, remoteSandboxSettings, usesProvisioner } from "../sandbox/remote";
export type { RemoteSandboxSettings } from "../sandbox/remote";
export { unknownKeysOfConfigFile } from "../config";
export { checkMcpServers, mcpFailureLines } from "../mcp";
