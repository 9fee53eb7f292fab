export {
  deleteRunWorkspaceChanges,
  readRunWorkspaceChanges,
  recordRunWorkspace,
  unavailableWorkspaceChanges,
  workspaceChangesDir,
  workspaceIsPristine,
} from "./recorder";
export type { RecordWorkspaceOptions, WorkspacePhase } from "./recorder";
export { createWorkspaceChangesHook } from "./run-hook";
export type { WorkspaceChangesHook, WorkspaceRunRef } from "./run-hook";
export { compareSnapshots, unifiedDiff } from "./diff";
export { isSensitiveWorkspacePath, scanWorkspaceRoots } from "./scanner";
export type { BlobCache, WorkspaceRoot } from "./scanner";
export { DEFAULT_WORKSPACE_CHANGE_LIMITS } from "./types";
export type {
  DiffUnavailableReason,
  FileSnapshot,
  WorkspaceChangeLimits,
  WorkspaceChangeResult,
  WorkspaceChangeStatus,
  WorkspaceChangeSummary,
  WorkspaceChangesResponse,
  WorkspaceFileChange,
  WorkspaceSnapshot,
} from "./types";
