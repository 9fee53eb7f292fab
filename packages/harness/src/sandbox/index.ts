/**
 * Sandbox subsystem: thread workspace layout, virtual path mapping, the
 * Sandbox / SandboxProvider contracts and the local (no isolation) and
 * bubblewrap providers. See docs/sandbox.md.
 */
export type {
  AcquireOptions,
  DirEntry,
  ExecuteOptions,
  ExecuteResult,
  FileStat,
  GlobOptions,
  GrepMatch,
  GrepOptions,
  LimitedResult,
  Sandbox,
  SandboxProvider,
  WriteOptions,
} from "./types";
export { contextUserId, DEFAULT_USER_ID, SAFE_ID, validateId } from "./ids";
export { limitsSchema, mountSchema, parseSandboxConfig, sandboxConfigSchema } from "../config/sandbox-config";
export type { SandboxConfig, SandboxConfigInput, SandboxMount } from "../config/sandbox-config";
export { describeNetworkPolicy, EgressPolicy, EgressProxy, NETWORK_MODES, networkSettingSchema, parseNetworkEntry, protectHostPort } from "./network";
export type { EgressDecision, NetworkMode, NetworkPolicyDescription, NetworkSettings } from "./network";
export {
  ensureThreadDirs,
  threadDirs,
  VIRTUAL_OUTPUTS,
  VIRTUAL_SKILLS,
  VIRTUAL_UPLOADS,
  VIRTUAL_USER_DATA,
  VIRTUAL_WORKSPACE,
} from "./thread-paths";
export type { DirOwner, ThreadDirs } from "./thread-paths";
export { removeTree } from "./remove-tree";
export { PathMapper, TRAVERSAL_MESSAGE } from "./path-mapper";
export type { MountPoint, ResolvedPath } from "./path-mapper";
export { HostFileOps, IGNORED_DIRS, translateFsError } from "./host-fs";
export { globToRegExp, grepRegExp } from "./glob-match";
export { PATTERN_TIME_BUDGET_MS, PatternMatcher } from "./pattern-worker";
export { truncateLs, truncateMiddle, truncateReadFile } from "./truncate";
export { isSecretEnvName, scrubEnv } from "./env-policy";
export { activeLockCount, withKeyedLock } from "./file-locks";
export { spawnCapped } from "./spawn-capped";
export type { SpawnCappedOptions } from "./spawn-capped";
export { MappedSandbox, threadMountPoints } from "./mapped-sandbox";
export type { MappedSandboxInit } from "./mapped-sandbox";
export { LeaseRegistryProvider } from "./lease-registry";
export type { ManagedSandbox } from "./lease-registry";
export { LocalSandbox } from "./local-sandbox";
export type { LocalSandboxInit } from "./local-sandbox";
export { LocalSandboxProvider } from "./local-provider";
export type { LocalProviderOptions } from "./local-provider";
export { BwrapSandbox } from "./bwrap-sandbox";
export type { BwrapSandboxInit } from "./bwrap-sandbox";
export { BwrapSandboxProvider, sandboxRunAs } from "./bwrap-provider";
export type { BwrapProviderOptions } from "./bwrap-provider";
export { BWRAP_ARGS_FD, bwrapArgParts, bwrapArgs, buildBwrapCommand, buildBwrapInvocation } from "./bwrap/argv";
export {
  assertThreadDiskQuota,
  describeSandboxLimits,
  detectCgroups,
  measureDiskUsage,
  resolveSandboxLimits,
  SandboxCgroup,
  ThreadDiskQuota,
  threadDiskQuota,
} from "./limits";
export type { CgroupSupport, DiskUsage, EffectiveLimits, LimitEnforcement, SandboxLimitsReport } from "./limits";
export type { BwrapBind, BwrapCommandSpec, BwrapLimits } from "./bwrap/argv";
export { probeBwrap } from "./bwrap/probe";
export type { BwrapProbe } from "./bwrap/probe";
export { bindStrategy, probeBwrapDataDir } from "./bwrap/data-dir-probe";
export type { BwrapDataDirProbe } from "./bwrap/data-dir-probe";
export { planStaging, searchBlocker, STAGE_ROOT } from "./bwrap/staging";
export type { SearchIdentity, StagePlan, StageTools } from "./bwrap/staging";
export { findBinary } from "./bwrap/find-binary";
export {
  buildContainerSpec,
  connectDocker,
  containerIdFor,
  DEFAULT_DOCKER_IMAGE,
  DOCKER_PROVIDER_NAMES,
  DockerEngine,
  DockerError,
  DockerSandbox,
  DockerSandboxProvider,
  LABELS as DOCKER_LABELS,
} from "./docker";
export type { ContainerState, ContainerSummary, DockerEngineOptions, DockerErrorCode, DockerProviderOptions, EngineExecOptions, EngineExecResult } from "./docker";
export { BWRAP_PROVIDER_NAMES, createSandboxProvider, LOCAL_PROVIDER_NAMES, prefetchSandboxProvider } from "./create-provider";
export type { CreateSandboxProviderOptions } from "./create-provider";
export { LOCAL_HOST_BASH_DISABLED_MESSAGE, LOCAL_NO_ISOLATION_WARNING } from "./messages";
export { ensureRunSandbox, releaseRunSandbox, runSandboxId } from "./run-lease";
export type { LeaseContext } from "./run-lease";
export * from "./remote";
