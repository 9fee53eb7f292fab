import { createHash } from "node:crypto";
import { closeSync, constants as FS, existsSync, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { BigIntStats } from "node:fs";
import path from "node:path";
import { globToRegExp } from "../sandbox";
import type { DiffUnavailableReason, FileSnapshot, WorkspaceChangeLimits, WorkspaceSnapshot } from "./types";

/** A directory tree to snapshot and the virtual prefix its files are reported under. */
export interface WorkspaceRoot {
  name: "outputs" | "workspace";
  hostPath: string;
  virtualPrefix: string;
}

/** Directories that hold tooling state, caches or build output rather than deliverables. */
export const EXCLUDED_DIR_NAMES = new Set([
  ".git", ".hg", ".svn", ".cache", ".next", ".venv", "__pycache__", "build", "dist", "node_modules",
  ".mcp", ".browser-frames", ".tool-results",
]);

const BINARY_EXTENSIONS = new Set([
  ".7z", ".avif", ".bmp", ".class", ".db", ".dll", ".dmg", ".doc", ".docx", ".exe", ".gif", ".gz", ".ico", ".jar",
  ".jpeg", ".jpg", ".mov", ".mp3", ".mp4", ".o", ".pdf", ".png", ".pyc", ".so", ".tar", ".webp", ".xls", ".xlsx", ".zip",
]);

const SENSITIVE_PATTERNS = [".env", ".env.*", "*api_key*", "*apikey*", "*.key", "*.pem", "*credential*", "*password*", "*private_key*", "*secret*", "*token*"].map(
  (p) => globToRegExp(p),
);

/** Paths whose content must never be copied into a diff (keys, env files, credentials). */
export function isSensitiveWorkspacePath(virtualPath: string): boolean {
  const parts = virtualPath.toLowerCase().split("/").filter(Boolean);
  return parts.some((part) => SENSITIVE_PATTERNS.some((re) => re.test(part)));
}

/** Where snapshot text is kept between run start and end (content-addressed). */
export interface BlobCache {
  has(sha256: string): boolean;
  /** False when the cache is full (the file is then listed without a diff). */
  put(sha256: string, text: string): boolean;
  get(sha256: string): string | undefined;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function decodeText(data: Buffer): string | undefined {
  if (data.subarray(0, 4096).includes(0)) return undefined;
  try {
    const text = UTF8.decode(data);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    return undefined;
  }
}

function sameStat(prev: FileSnapshot | undefined, st: BigIntStats): prev is FileSnapshot {
  return !!prev && !prev.symlink && prev.size === Number(st.size) && prev.mtime_ns === st.mtimeNs.toString();
}

/**
 * Read the file that was just `lstat`ed, or undefined. The agent's sandbox
 * writes these directories while the scan runs: the name is opened without
 * following a symlink and without blocking (a FIFO swapped in would otherwise
 * hang the event loop), and the descriptor must still be that regular file.
 */
export function readRegularFile(host: string, st: BigIntStats): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(host, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const now = fstatSync(fd, { bigint: true });
    if (!now.isFile() || now.ino !== st.ino || now.dev !== st.dev) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function snapshotFile(root: WorkspaceRoot, host: string, virtual: string, st: BigIntStats, limits: WorkspaceChangeLimits, prev: FileSnapshot | undefined, blobs: BlobCache): FileSnapshot | undefined {
  const base = { path: virtual, root: root.name, size: Number(st.size), mtime_ns: st.mtimeNs.toString(), symlink: false, symlink_target: null };
  if (isSensitiveWorkspacePath(virtual)) {
    return { ...base, sha256: null, binary: false, sensitive: true, text_cached: false, content_unavailable_reason: "sensitive" };
  }
  // An unchanged size and nanosecond mtime means the previous hash (and cached text) still hold: no read.
  if (sameStat(prev, st) && (!prev.text_cached || (prev.sha256 !== null && blobs.has(prev.sha256)))) return { ...prev, root: root.name };
  const byExt = BINARY_EXTENSIONS.has(path.extname(host).toLowerCase());
  if (base.size > limits.max_file_bytes_for_diff) {
    const reason: DiffUnavailableReason = byExt ? "binary" : "large";
    return { ...base, sha256: null, binary: byExt, sensitive: false, text_cached: false, content_unavailable_reason: reason };
  }
  const data = readRegularFile(host, st);
  if (!data) return undefined;
  const sha256 = createHash("sha256").update(data).digest("hex");
  const text = byExt ? undefined : decodeText(data);
  if (text === undefined) return { ...base, sha256, binary: true, sensitive: false, text_cached: false, content_unavailable_reason: "binary" };
  const cached = blobs.has(sha256) || blobs.put(sha256, text);
  return { ...base, sha256, binary: false, sensitive: false, text_cached: cached, content_unavailable_reason: null };
}

/**
 * Snapshot sizes, mtimes and hashes of every file under the roots (symlinks
 * are recorded, never followed). Files whose size and mtime match `previous`
 * are not read again, so a snapshot of an unchanged workspace costs one
 * `lstat` per file. Texts of small text files go to `blobs` for later diffs.
 */
export function scanWorkspaceRoots(roots: WorkspaceRoot[], limits: WorkspaceChangeLimits, blobs: BlobCache, previous?: WorkspaceSnapshot): WorkspaceSnapshot {
  const files: Record<string, FileSnapshot> = {};
  let scanned = 0;
  const walk = (root: WorkspaceRoot, dir: string, rel: string): boolean => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return true;
    }
    for (const name of entries) {
      const host = path.join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      let st: BigIntStats;
      try {
        st = lstatSync(host, { bigint: true });
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        if (EXCLUDED_DIR_NAMES.has(name)) continue;
        if (!walk(root, host, relPath)) return false;
        continue;
      }
      if (scanned >= limits.max_scanned_files) return false;
      const virtual = `${root.virtualPrefix}/${relPath}`;
      if (st.isSymbolicLink()) {
        let target: string | null = null;
        try {
          target = readlinkSync(host);
        } catch {
          target = null;
        }
        files[virtual] = {
          path: virtual, root: root.name, size: Number(st.size), mtime_ns: st.mtimeNs.toString(), sha256: null, binary: false,
          sensitive: isSensitiveWorkspacePath(virtual), text_cached: false, content_unavailable_reason: "symlink", symlink: true, symlink_target: target,
        };
        scanned++;
        continue;
      }
      if (!st.isFile()) continue;
      const snap = snapshotFile(root, host, virtual, st, limits, previous?.files[virtual], blobs);
      if (snap) {
        files[virtual] = snap;
        scanned++;
      }
    }
    return true;
  };
  let truncated = false;
  for (const root of roots) {
    if (!existsSync(root.hostPath)) continue;
    if (!walk(root, root.hostPath, "")) {
      truncated = true;
      break;
    }
  }
  return { files, truncated };
}
