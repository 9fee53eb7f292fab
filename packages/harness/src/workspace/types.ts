/** Why a changed file carries no diff. */
export type DiffUnavailableReason = "binary" | "large" | "sensitive" | "truncated" | "symlink";

/** How a file changed during a run. */
export type WorkspaceChangeStatus = "created" | "modified" | "deleted" | "symlink_created";

/** Bounds that keep recording and the response cheap. */
export interface WorkspaceChangeLimits {
  max_files: number;
  max_scanned_files: number;
  max_file_bytes_for_diff: number;
  max_total_diff_bytes: number;
}

/** DeerFlow's defaults: 200 reported files, 2000 scanned, 256 KiB per diffed file, 1 MiB of diffs. */
export const DEFAULT_WORKSPACE_CHANGE_LIMITS: WorkspaceChangeLimits = {
  max_files: 200,
  max_scanned_files: 2000,
  max_file_bytes_for_diff: 256 * 1024,
  max_total_diff_bytes: 1024 * 1024,
};

/** One file as seen by a snapshot (keyed by its virtual path). */
export interface FileSnapshot {
  path: string;
  root: "outputs" | "workspace";
  size: number;
  /** Nanosecond mtime as a decimal string (a JSON number would lose precision). */
  mtime_ns: string;
  /** Content hash; null for sensitive files, symlinks and files over the diff size limit. */
  sha256: string | null;
  binary: boolean;
  sensitive: boolean;
  /** When set, the file's text is kept in the snapshot store's blob cache under its sha256. */
  text_cached: boolean;
  content_unavailable_reason: DiffUnavailableReason | null;
  symlink: boolean;
  symlink_target: string | null;
}

/** All files of outputs + workspace at one moment. */
export interface WorkspaceSnapshot {
  files: Record<string, FileSnapshot>;
  truncated: boolean;
}

/** One changed file in a run's workspace-changes payload. */
export interface WorkspaceFileChange {
  path: string;
  root: string;
  status: WorkspaceChangeStatus;
  binary: boolean;
  sensitive: boolean;
  size_before: number | null;
  size_after: number | null;
  sha256_before: string | null;
  sha256_after: string | null;
  diff: string;
  diff_truncated: boolean;
  diff_unavailable_reason: DiffUnavailableReason | null;
  additions: number;
  deletions: number;
  symlink: boolean;
  symlink_target_before: string | null;
  symlink_target_after: string | null;
}

/** Totals of a run's changes. */
export interface WorkspaceChangeSummary {
  created: number;
  modified: number;
  deleted: number;
  symlink_created: number;
  additions: number;
  deletions: number;
  truncated: boolean;
}

/** What a finished run recorded. */
export interface WorkspaceChangeResult {
  version: 1;
  summary: WorkspaceChangeSummary;
  files: WorkspaceFileChange[];
  limits: WorkspaceChangeLimits;
}

/** The body of `GET /api/threads/{tid}/runs/{rid}/workspace-changes`. */
export interface WorkspaceChangesResponse {
  available: boolean;
  version: 1;
  summary: WorkspaceChangeSummary;
  files: WorkspaceFileChange[];
  limits: WorkspaceChangeLimits | Record<string, never>;
}

/** A summary with every count at zero. */
export function emptySummary(): WorkspaceChangeSummary {
  return { created: 0, modified: 0, deleted: 0, symlink_created: 0, additions: 0, deletions: 0, truncated: false };
}
