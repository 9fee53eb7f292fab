import { open, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { PathAccessError } from "../errors";
import { UploadError } from "./errors";
import { guessMimeType } from "./mime";
import type { ThreadPaths } from "./thread-paths";

/** The bytes of an artifact and how to serve them. */
export interface ArtifactContent {
  bytes: Buffer;
  mimeType: string;
  size: number;
  /** Real host path that was read. */
  hostPath: string;
}

const AREAS = new Set(["outputs", "uploads", "workspace"]);

/**
 * Map a virtual path (`/mnt/user-data/outputs/report.md`, leading slash
 * optional) to a host path inside the thread's `user-data` directory. Paths
 * outside `mnt/user-data/{outputs,uploads,workspace}` are a 400; any `..`
 * that climbs out is a {@link PathAccessError}. No file system access.
 */
export function artifactHostPath(paths: ThreadPaths, virtualPath: string): string {
  const raw = String(virtualPath ?? "").replace(/\\/g, "/");
  if (raw.includes("\0")) throw new UploadError("artifact_bad_path", "Artifact path contains a NUL byte.", 400);
  const rel = raw.replace(/^\/+/, "");
  if (rel !== "mnt/user-data" && !rel.startsWith("mnt/user-data/")) {
    throw new UploadError("artifact_bad_path", `Artifact path must start with /mnt/user-data/, got '${virtualPath}'.`, 400, { details: { path: virtualPath } });
  }
  const inner = path.posix.normalize(rel.slice("mnt/user-data".length) || "/");
  if (inner.startsWith("/..") || inner === ".." || rel.split("/").includes("..")) {
    throw new PathAccessError(`Access denied: '${virtualPath}' leaves the thread's user-data directory.`, { details: { path: virtualPath } });
  }
  const area = inner.split("/").filter(Boolean)[0];
  if (!area || !AREAS.has(area)) {
    throw new UploadError("artifact_bad_path", `Artifact path must be under /mnt/user-data/outputs, /uploads or /workspace, got '${virtualPath}'.`, 400, { details: { path: virtualPath } });
  }
  const host = path.resolve(paths.userData, `.${inner}`);
  if (host !== paths.userData && !host.startsWith(paths.userData + path.sep)) {
    throw new PathAccessError(`Access denied: '${virtualPath}' leaves the thread's user-data directory.`, { details: { path: virtualPath } });
  }
  return host;
}

function within(root: string, target: string): boolean {
  return target === root || target.startsWith(root + path.sep);
}

/** An artifact located on disk (not read yet). */
export interface ResolvedArtifact {
  /** Real host path (symlinks resolved, inside the thread's real user-data directory). */
  hostPath: string;
  size: number;
  /** Guessed from the extension; unknown text-like files are `text/plain`. */
  mimeType: string;
}

/** Bytes sniffed to tell text from binary for unknown extensions. */
const SNIFF_BYTES = 8192;

/**
 * Locate an artifact of a thread without reading it all (the gateway streams
 * it, with Range support). The real path (symlinks resolved) must stay inside
 * the thread's real `user-data` directory, so a planted symlink to
 * `/etc/passwd` is refused (PathAccessError). Missing → 404, directory or
 * special file → 400 ({@link UploadError}).
 */
export async function resolveArtifact(paths: ThreadPaths, virtualPath: string): Promise<ResolvedArtifact> {
  const host = artifactHostPath(paths, virtualPath);
  let real: string;
  let rootReal: string;
  try {
    real = await realpath(host);
    rootReal = await realpath(paths.userData);
  } catch {
    throw new UploadError("artifact_not_found", `Artifact not found: ${virtualPath}`, 404, { details: { path: virtualPath } });
  }
  if (!within(rootReal, real)) {
    throw new PathAccessError(`Access denied: '${virtualPath}' resolves outside the thread's user-data directory.`, { details: { path: virtualPath } });
  }
  const st = await stat(real);
  if (st.isDirectory()) throw new UploadError("artifact_is_directory", `'${virtualPath}' is a directory, not a file.`, 400, { details: { path: virtualPath } });
  if (!st.isFile()) throw new UploadError("artifact_not_file", `'${virtualPath}' is not a regular file.`, 400, { details: { path: virtualPath } });
  const head = Buffer.alloc(Math.min(st.size, SNIFF_BYTES));
  if (head.length) {
    const fh = await open(real, "r");
    try {
      await fh.read(head, 0, head.length, 0);
    } finally {
      await fh.close();
    }
  }
  return { hostPath: real, size: st.size, mimeType: guessMimeType(real, head) };
}

/**
 * Read an artifact of a thread (the embedded client's
 * `GET /api/threads/{id}/artifacts/...`). Same checks and MIME type as
 * {@link resolveArtifact}.
 */
export async function readArtifact(paths: ThreadPaths, virtualPath: string): Promise<ArtifactContent> {
  const found = await resolveArtifact(paths, virtualPath);
  const fh = await open(found.hostPath, "r");
  try {
    const bytes = await fh.readFile();
    return { bytes, mimeType: found.mimeType, size: bytes.length, hostPath: found.hostPath };
  } finally {
    await fh.close();
  }
}
