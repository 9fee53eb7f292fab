/**
 * Remote sandboxes through a provisioner (`sandbox.provisioner_url`): the
 * management client, the sandbox over its command API, the provider, and the
 * wire format shared with the provisioner service. See docs/provisioner.md.
 */
export { createRemoteSandboxProvider, provisionerSandboxId, RemoteSandboxProvider } from "./remote-provider";
export type { RemoteProviderOptions } from "./remote-provider";
export { RemoteSandbox } from "./remote-sandbox";
export type { RemoteEndpoint, RemoteSandboxInit } from "./remote-sandbox";
export { ProvisionerClient } from "./provisioner-client";
export type { ProvisionRequest } from "./provisioner-client";
export { remoteSandboxSettings, usesProvisioner } from "./config";
export type { RemoteSandboxSettings } from "./config";
export { ThreadSync } from "./thread-sync";
export { displayUrl } from "./http";
export {
  API_KEY_HEADER,
  createSandboxRequestSchema,
  createSandboxResponseSchema,
  EXEC_ID,
  execRequestSchema,
  execResponseSchema,
  extraMountSchema,
  fileGlobRequestSchema,
  fileGrepRequestSchema,
  fileListRequestSchema,
  fileReadRequestSchema,
  fileStatRequestSchema,
  fileWriteRequestSchema,
  listSandboxesResponseSchema,
  MAX_REMOTE_FILE_BYTES,
  PROVISIONER_SANDBOX_ID,
  SANDBOX_STATUSES,
  SANDBOX_TOKEN_HEADER,
  sandboxInfoSchema,
} from "./wire";
export type { CreateSandboxRequest, CreateSandboxResponse, ExecRequest, ExecResponse, ExtraMount, SandboxInfo, SandboxStatus } from "./wire";
