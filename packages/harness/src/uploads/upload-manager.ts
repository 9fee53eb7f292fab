import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { lstat, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { UploadError } from "./errors";
import { dedupeFilename, isHiddenName, sanitizeUploadFilename, STAGING_PREFIX, STAGING_SUFFIX } from "./filenames";
import { artifactUrl, DEFAULT_UPLOAD_LIMITS } from "./shapes";
import type { UploadDeleteResponse, UploadedFileInfo, UploadLimits, UploadListResponse, UploadResponse } from "./shapes";
import { VIRTUAL_USER_DATA_ROOT } from "./thread-paths";
import type { ThreadPaths } from "./thread-paths";
import { syncDir, syncFile } from "../fs";

/** One file to upload: bytes in memory, a host file to copy, or a byte stream. */
export type UploadSource =
  | { filename: string; data: Uint8Array | string }
  | { filename: string; sourcePath: string }
  | { filename: string; stream: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>; size?: number };

const VIRTUAL_UPLOADS = `${VIRTUAL_USER_DATA_ROOT}/uploads`;

function mib(n: number): string {
  return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
}

function tooLarge(name: string, limit: number): UploadError {
  return new UploadError("upload_file_too_large", `File '${name}' is larger than the ${mib(limit)} limit (uploads.max_file_size).`, 413, {
    details: { filename: name, max_file_size: limit },
  });
}

function totalTooLarge(limit: number): UploadError {
  return new UploadError("upload_total_too_large", `The upload is larger than the ${mib(limit)} total limit (uploads.max_total_size).`, 413, {
    details: { max_total_size: limit },
  });
}

/** Byte-counting pass-through that fails once a limit is crossed. */
function limiter(name: string, limits: UploadLimits, counter: { total: number }): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      counter.total += chunk.length;
      if (size > limits.max_file_size) return cb(tooLarge(name, limits.max_file_size));
      if (counter.total > limits.max_total_size) return cb(totalTooLarge(limits.max_total_size));
      cb(null, chunk);
    },
  });
}

function sourceStream(src: UploadSource): Readable {
  if ("data" in src) return Readable.from([typeof src.data === "string" ? Buffer.from(src.data) : Buffer.from(src.data)]);
  if ("sourcePath" in src) return createReadStream(src.sourcePath);
  const s = src.stream;
  if (typeof (s as ReadableStream).getReader === "function") return Readable.fromWeb(s as import("node:stream/web").ReadableStream<Uint8Array>);
  return Readable.from(s as AsyncIterable<Uint8Array>);
}

async function knownSize(src: UploadSource): Promise<number | undefined> {
  if ("data" in src) return typeof src.data === "string" ? Buffer.byteLength(src.data) : src.data.byteLength;
  if ("sourcePath" in src) {
    try {
      const st = await stat(src.sourcePath);
      if (!st.isFile()) throw new UploadError("upload_source_invalid", `'${src.sourcePath}' is not a regular file.`, 400, { details: { path: src.sourcePath } });
      return st.size;
    } catch (err) {
      if (err instanceof UploadError) throw err;
      throw new UploadError("upload_source_missing", `Cannot read '${src.sourcePath}': ${(err as Error).message}`, 400, { details: { path: src.sourcePath } });
    }
  }
  return src.size;
}

/**
 * Uploads of one thread: validated, size-limited, staged as
 * `.upload-*.part` files in the uploads directory and atomically renamed into
 * place. Shared by the gateway and the embedded client so both answer with
 * the same JSON.
 */
export class UploadManager {
  readonly limits: UploadLimits;

  constructor(limits: Partial<UploadLimits> = {}) {
    this.limits = { ...DEFAULT_UPLOAD_LIMITS, ...limits };
  }

  /** Describe one file of the uploads directory. */
  async fileInfo(paths: ThreadPaths, filename: string): Promise<UploadedFileInfo> {
    const host = path.join(paths.uploads, filename);
    const st = await stat(host);
    const virtualPath = `${VIRTUAL_UPLOADS}/${filename}`;
    return {
      filename,
      size: st.size,
      // the virtual path: the response goes to clients, and the host path would tell them where the data dir is
      path: virtualPath,
      virtual_path: virtualPath,
      artifact_url: artifactUrl(paths.threadId, virtualPath),
      extension: path.extname(filename),
      modified: st.mtimeMs / 1000,
    };
  }

  /**
   * Save files. Unusable names are skipped (`skipped_files`); exceeding a
   * limit throws an {@link UploadError} with status 413 and leaves no file
   * of this request behind. Duplicate names within the request get `_N`.
   */
  async save(paths: ThreadPaths, sources: readonly UploadSource[]): Promise<UploadResponse> {
    if (!sources.length) throw new UploadError("upload_no_files", "No files were provided.", 400);
    if (sources.length > this.limits.max_files) {
      throw new UploadError("upload_too_many_files", `Too many files: ${sources.length} (uploads.max_files is ${this.limits.max_files}).`, 413, {
        details: { count: sources.length, max_files: this.limits.max_files },
      });
    }
    const skipped: string[] = [];
    const planned: Array<{ name: string; original: string; src: UploadSource }> = [];
    const taken = new Set<string>();
    let declared = 0;
    for (const src of sources) {
      const name = sanitizeUploadFilename(src.filename);
      if (!name) {
        skipped.push(String(src.filename));
        continue;
      }
      const size = await knownSize(src);
      if (size !== undefined) {
        if (size > this.limits.max_file_size) throw tooLarge(name, this.limits.max_file_size);
        declared += size;
        if (declared > this.limits.max_total_size) throw totalTooLarge(this.limits.max_total_size);
      }
      const unique = dedupeFilename(name, taken);
      taken.add(unique);
      planned.push({ name: unique, original: String(src.filename), src });
    }
    await mkdir(paths.uploads, { recursive: true });
    const staged: Array<{ tmp: string; final: string; name: string; original: string }> = [];
    const counter = { total: 0 };
    try {
      for (const p of planned) {
        const tmp = path.join(paths.uploads, `${STAGING_PREFIX}${randomBytes(8).toString("hex")}${STAGING_SUFFIX}`);
        staged.push({ tmp, final: path.join(paths.uploads, p.name), name: p.name, original: p.original });
        await pipeline(sourceStream(p.src), limiter(p.name, this.limits, counter), createWriteStream(tmp, { flags: "wx", mode: 0o644 }));
      }
      for (const s of staged) {
        const existing = await lstat(s.final).catch(() => undefined);
        if (existing && !existing.isFile()) {
          throw new UploadError("upload_name_conflict", `Cannot replace '${s.name}': it exists and is not a regular file.`, 400, { details: { filename: s.name } });
        }
      }
      // The shared durability policy (fs/atomic-write.ts): bytes on disk before the rename, the renames recorded after.
      for (const s of staged) await syncFile(s.tmp);
      for (const s of staged) await rename(s.tmp, s.final);
      await syncDir(paths.uploads);
    } catch (err) {
      await Promise.all(staged.map((s) => rm(s.tmp, { force: true })));
      if (err instanceof UploadError) throw err;
      // the cause names the staging file's host path: it stays in `cause` (logs), not in the client-bound message
      const code = (err as NodeJS.ErrnoException).code;
      throw new UploadError("upload_failed", `Upload failed${code ? ` (${code})` : ""} while writing to ${VIRTUAL_UPLOADS}.`, 500, { cause: err });
    }
    const files: UploadedFileInfo[] = [];
    for (const s of staged) {
      const info = await this.fileInfo(paths, s.name);
      if (s.original !== s.name) info.original_filename = s.original;
      files.push(info);
    }
    const message = files.length
      ? `Successfully uploaded ${files.length} file(s)${skipped.length ? `; skipped ${skipped.length}` : ""}`
      : `No files uploaded; skipped ${skipped.length}`;
    return { success: files.length > 0, files, message, skipped_files: skipped };
  }

  /** The visible files of the uploads directory, sorted by name (staging and dot files hidden). */
  async list(paths: ThreadPaths): Promise<UploadListResponse> {
    let names: string[];
    try {
      names = await readdir(paths.uploads);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { files: [], count: 0 };
      throw err;
    }
    const files: UploadedFileInfo[] = [];
    for (const name of names.sort()) {
      if (isHiddenName(name)) continue;
      const st = await lstat(path.join(paths.uploads, name)).catch(() => undefined);
      if (!st?.isFile()) continue;
      files.push(await this.fileInfo(paths, name));
    }
    return { files, count: files.length };
  }

  /**
   * Delete one upload (and its converted `.md` companion, if any). The name
   * must be a plain visible file name; anything else is a 400.
   */
  async delete(paths: ThreadPaths, filename: string): Promise<UploadDeleteResponse> {
    const clean = sanitizeUploadFilename(filename);
    if (!clean || clean !== filename) {
      throw new UploadError("upload_invalid_name", `Invalid file name '${filename}': use the plain name shown by the uploads list.`, 400, { details: { filename } });
    }
    const host = path.join(paths.uploads, clean);
    const st = await lstat(host).catch(() => undefined);
    if (!st || !st.isFile()) throw new UploadError("upload_not_found", `File not found: ${clean}`, 404, { details: { filename: clean } });
    await rm(host);
    const ext = path.extname(clean);
    if (ext.toLowerCase() !== ".md") {
      const companion = path.join(paths.uploads, `${ext ? clean.slice(0, -ext.length) : clean}.md`);
      const cst = await lstat(companion).catch(() => undefined);
      if (cst?.isFile()) await rm(companion);
    }
    return { success: true, message: `Deleted ${clean}` };
  }
}
