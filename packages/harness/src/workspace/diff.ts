import { createRequire } from "node:module";
import type { BlobCache } from "./scanner";
import { emptySummary } from "./types";
import type {
  DiffUnavailableReason,
  FileSnapshot,
  WorkspaceChangeLimits,
  WorkspaceChangeResult,
  WorkspaceChangeStatus,
  WorkspaceFileChange,
  WorkspaceSnapshot,
} from "./types";

const requireLib = createRequire(import.meta.url);
let diffModule: typeof import("diff") | undefined;

/**
 * The `diff` library, loaded by the first file comparison (through its CommonJS build, so `unifiedDiff` and
 * `compareSnapshots` stay synchronous): a gateway whose runs never change a file never holds it in memory.
 */
function diffLib(): typeof import("diff") {
  diffModule ??= requireLib("diff") as typeof import("diff");
  return diffModule;
}

function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function range(start: number, length: number): string {
  // unified-diff convention: a one-line range omits its length, an empty range names the line before it
  if (length === 1) return `${start}`;
  return `${length === 0 ? Math.max(0, start - 1) : start},${length}`;
}

/**
 * A unified diff (3 lines of context) of two texts compared line by line, with
 * `--- a{path}` / `+++ b{path}` headers; "" when the texts have the same lines.
 */
export function unifiedDiff(virtualPath: string, before: string, after: string): { diff: string; additions: number; deletions: number } {
  const a = splitLines(before);
  const b = splitLines(after);
  const join = (l: string[]) => (l.length ? `${l.join("\n")}\n` : "");
  const patch = diffLib().structuredPatch(`a${virtualPath}`, `b${virtualPath}`, join(a), join(b), undefined, undefined, { context: 3 });
  if (!patch.hunks.length) return { diff: "", additions: 0, deletions: 0 };
  const out = [`--- a${virtualPath}`, `+++ b${virtualPath}`];
  let additions = 0;
  let deletions = 0;
  for (const h of patch.hunks) {
    out.push(`@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`);
    for (const line of h.lines) {
      if (line.startsWith("\\")) continue;
      if (line.startsWith("+")) additions++;
      else if (line.startsWith("-")) deletions++;
      out.push(line);
    }
  }
  return { diff: out.join("\n"), additions, deletions };
}

function sameFile(a: FileSnapshot, b: FileSnapshot): boolean {
  if (a.symlink || b.symlink) return a.symlink === b.symlink && a.symlink_target === b.symlink_target;
  if (a.sha256 !== null && b.sha256 !== null) return a.sha256 === b.sha256;
  return a.size === b.size && a.mtime_ns === b.mtime_ns;
}

function statusOf(before: FileSnapshot | undefined, after: FileSnapshot | undefined): WorkspaceChangeStatus {
  // a symlink where there was none is reported on its own: it may point anywhere on the host
  if (after?.symlink && !before?.symlink) return "symlink_created";
  if (!before) return "created";
  if (!after) return "deleted";
  return "modified";
}

function unavailable(files: Array<FileSnapshot | undefined>): DiffUnavailableReason | null {
  for (const reason of ["symlink", "sensitive", "binary", "large"] as const) {
    if (files.some((f) => f?.content_unavailable_reason === reason)) return reason;
  }
  return null;
}

function textOf(file: FileSnapshot | undefined, blobs: BlobCache): string | undefined {
  if (!file) return "";
  if (!file.text_cached || file.sha256 === null) return undefined;
  return blobs.get(file.sha256);
}

/**
 * Compare two snapshots: created, modified, deleted files (sorted by path)
 * with unified diffs for text files, within the limits.
 */
export function compareSnapshots(before: WorkspaceSnapshot, after: WorkspaceSnapshot, blobs: BlobCache, limits: WorkspaceChangeLimits): WorkspaceChangeResult {
  const summary = emptySummary();
  summary.truncated = before.truncated || after.truncated;
  const files: WorkspaceFileChange[] = [];
  let diffBytes = 0;
  for (const p of [...new Set([...Object.keys(before.files), ...Object.keys(after.files)])].sort()) {
    const b = before.files[p];
    const a = after.files[p];
    if (a && b && sameFile(b, a)) continue;
    const status = statusOf(b, a);
    summary[status]++;
    let diff = "";
    let additions = 0;
    let deletions = 0;
    let diffTruncated = false;
    let reason = unavailable([b, a]);
    if (!reason) {
      const beforeText = textOf(b, blobs);
      const afterText = textOf(a, blobs);
      if (beforeText !== undefined && afterText !== undefined) {
        ({ diff, additions, deletions } = unifiedDiff(p, beforeText, afterText));
        const size = Buffer.byteLength(diff);
        if (diffBytes + size > limits.max_total_diff_bytes) {
          diff = "";
          diffTruncated = true;
          reason = "truncated";
        } else diffBytes += size;
      }
    }
    if (diffTruncated || reason === "large") summary.truncated = true;
    summary.additions += additions;
    summary.deletions += deletions;
    if (files.length >= limits.max_files) {
      summary.truncated = true;
      continue;
    }
    const sample = (a ?? b)!;
    files.push({
      path: p,
      root: sample.root,
      status,
      binary: sample.binary,
      sensitive: sample.sensitive,
      size_before: b ? b.size : null,
      size_after: a ? a.size : null,
      sha256_before: b ? b.sha256 : null,
      sha256_after: a ? a.sha256 : null,
      diff,
      diff_truncated: diffTruncated,
      diff_unavailable_reason: reason,
      additions,
      deletions,
      symlink: sample.symlink,
      symlink_target_before: b ? b.symlink_target : null,
      symlink_target_after: a ? a.symlink_target : null,
    });
  }
  return { version: 1, summary, files, limits };
}
