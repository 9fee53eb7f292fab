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

/**
 * Read an artifact of a thread. The real path (symlinks resolved) must stay
 * inside the thread's real `user-data` directory, so a planted symlink to
 * `/etc/passwd` is refused (PathAccessError). Missing → 404, directory → 400
 * ({@link UploadError}). MIME type is guessed from the extension; unknown
 * text-like files are `text/plain`.
 */
export async function readArtifact(paths: ThreadPaths, virtualPath: string): Promise<ArtifactContent> {
  const host = artifactHostPath(paths, virtualPath);
  let real: string;
  let rootReal: string;
  try {
    real = await realpath(host);
  } catch {
    throw new UploadError("artifact_not_found", `Artifact not found: ${virtualPath}`, 404, { details: { path: virtualPath } });
  }
  try {
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
  const fh = await open(real, "r");
  try {
    const bytes = await fh.readFile();
    return { bytes, mimeType: guessMimeType(real, bytes.subarray(0, 8192)), size: bytes.length, hostPath: real };
  } finally {
    await fh.close();
  }
}
