import { constants as FS } from "node:fs";
import { realpath } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { PathAccessError } from "../errors";
import { openConfinedFile } from "../sandbox/open-confined";
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

/** An artifact opened for reading: the caller streams from `handle` and closes it. */
export interface OpenedArtifact extends ResolvedArtifact {
  /** Opened without following a final symlink and checked to be the file inside the thread (see {@link openArtifact}). */
  handle: FileHandle;
}

function notFound(virtualPath: string): UploadError {
  return new UploadError("artifact_not_found", `Artifact not found: ${virtualPath}`, 404, { details: { path: virtualPath } });
}

function outside(virtualPath: string): PathAccessError {
  return new PathAccessError(`Access denied: '${virtualPath}' resolves outside the thread's user-data directory.`, { details: { path: virtualPath } });
}

/**
 * Open an artifact of a thread for streaming (the gateway serves it with
 * Range support). The real path (symlinks resolved) must stay inside the
 * thread's real `user-data` directory, so a planted symlink to `/etc/passwd`
 * is refused (PathAccessError). The file is then opened with `O_NOFOLLOW` and
 * the opened descriptor itself is checked again (`/proc/self/fd`), because the
 * agent's sandbox writes these directories while the gateway reads them: a
 * directory swapped for a symlink between the check and the open must not
 * lead the read outside. Everything later (size, sniffing, streaming) reads
 * that descriptor. Missing → 404, directory or special file → 400
 * ({@link UploadError}).
 */
export async function openArtifact(paths: ThreadPaths, virtualPath: string): Promise<OpenedArtifact> {
  const host = artifactHostPath(paths, virtualPath);
  let real: string;
  let rootReal: string;
  try {
    real = await realpath(host);
    rootReal = await realpath(paths.userData);
  } catch {
    throw notFound(virtualPath);
  }
  if (!within(rootReal, real)) throw outside(virtualPath);
  let handle: FileHandle;
  let actual: string | undefined;
  try {
    // O_NONBLOCK: a FIFO planted under the artifact's name must not hang the open.
    ({ handle, actual } = await openConfinedFile(real, rootReal, FS.O_RDONLY | FS.O_NONBLOCK, () => outside(virtualPath)));
  } catch (err) {
    if (err instanceof PathAccessError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw outside(virtualPath);
    if (code === "EISDIR") throw new UploadError("artifact_is_directory", `'${virtualPath}' is a directory, not a file.`, 400, { details: { path: virtualPath } });
    throw notFound(virtualPath);
  }
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw new UploadError("artifact_is_directory", `'${virtualPath}' is a directory, not a file.`, 400, { details: { path: virtualPath } });
    if (!st.isFile()) throw new UploadError("artifact_not_file", `'${virtualPath}' is not a regular file.`, 400, { details: { path: virtualPath } });
    const head = Buffer.alloc(Math.min(st.size, SNIFF_BYTES));
    if (head.length) await handle.read(head, 0, head.length, 0);
    return { handle, hostPath: actual ?? real, size: st.size, mimeType: guessMimeType(real, head) };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Locate an artifact of a thread without reading it all: the checks of
 * {@link openArtifact}, closing the file again. Prefer `openArtifact` to read
 * it (a path can be swapped after this returns).
 */
export async function resolveArtifact(paths: ThreadPaths, virtualPath: string): Promise<ResolvedArtifact> {
  const { handle, ...found } = await openArtifact(paths, virtualPath);
  await handle.close();
  return found;
}

/**
 * Read an artifact of a thread (the embedded client's
 * `GET /api/threads/{id}/artifacts/...`). Same checks and MIME type as
 * {@link resolveArtifact}.
 */
export async function readArtifact(paths: ThreadPaths, virtualPath: string): Promise<ArtifactContent> {
  const { handle, ...found } = await openArtifact(paths, virtualPath);
  try {
    const bytes = await handle.readFile();
    return { bytes, mimeType: found.mimeType, size: bytes.length, hostPath: found.hostPath };
  } finally {
    await handle.close();
  }
}
