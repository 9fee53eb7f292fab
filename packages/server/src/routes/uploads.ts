import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Hono } from "hono";
import type { GatewayContext } from "../context";
import { dedupeFilename, sanitizeFilename } from "../files/filenames";
import { ensureUploadsDir, userDataDir } from "../files/thread-dirs";
import { HttpError } from "../http-error";
import { checkThreadId } from "../validate";

function artifactUrl(threadId: string, filename: string): string {
  return `/api/threads/${encodeURIComponent(threadId)}/artifacts/mnt/user-data/uploads/${encodeURIComponent(filename)}`;
}

function fileInfo(threadId: string, dir: string, filename: string, original?: string): Record<string, unknown> {
  const full = path.join(dir, filename);
  const st = fs.statSync(full);
  const info: Record<string, unknown> = {
    filename,
    size: st.size,
    path: full,
    virtual_path: `/mnt/user-data/uploads/${filename}`,
    artifact_url: artifactUrl(threadId, filename),
    extension: path.extname(filename),
    modified: st.mtimeMs / 1000,
  };
  if (original && original !== filename) info.original_filename = original;
  return info;
}

function badThreadId(raw: string): string {
  try {
    return checkThreadId(raw);
  } catch {
    throw new HttpError(400, `Invalid thread id: ${JSON.stringify(raw)}`);
  }
}

/** Uploads endpoints (§3.2). */
export function registerUploadRoutes(app: Hono, ctx: GatewayContext): void {
  const limits = ctx.options.uploads;
  const user = ctx.options.userId;

  app.get("/threads/:thread_id/uploads/limits", (c) => {
    badThreadId(c.req.param("thread_id"));
    return c.json({ ...limits });
  });

  app.post("/threads/:thread_id/uploads", async (c) => {
    const threadId = badThreadId(c.req.param("thread_id"));
    const declared = Number(c.req.header("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > limits.max_total_size + 1024 * 1024) {
      throw new HttpError(413, `Total upload size exceeds the limit of ${limits.max_total_size} bytes`);
    }
    if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data")) {
      throw new HttpError(400, "Expected multipart/form-data with field 'files'");
    }
    let form: FormData;
    try {
      form = await c.req.formData();
    } catch {
      throw new HttpError(400, "Malformed multipart body");
    }
    const files = form.getAll("files").filter((f): f is File => typeof f === "object" && f !== null && "arrayBuffer" in f);
    if (!files.length) throw new HttpError(400, "No files provided");
    if (files.length > limits.max_files) throw new HttpError(413, `Too many files: ${files.length} (limit ${limits.max_files})`);
    let total = 0;
    for (const f of files) {
      if (f.size > limits.max_file_size) throw new HttpError(413, `File '${sanitizeFilename(f.name) ?? "file"}' exceeds the limit of ${limits.max_file_size} bytes`);
      total += f.size;
    }
    if (total > limits.max_total_size) throw new HttpError(413, `Total upload size exceeds the limit of ${limits.max_total_size} bytes`);

    const dir = ensureUploadsDir(ctx.options.baseDir, user, threadId);
    const saved: Array<Record<string, unknown>> = [];
    const skipped: string[] = [];
    const taken = new Set<string>();
    for (const f of files) {
      const clean = sanitizeFilename(f.name);
      if (!clean) {
        skipped.push(f.name);
        continue;
      }
      const name = dedupeFilename(dir, clean, taken);
      taken.add(name);
      const part = path.join(dir, `.upload-${randomBytes(8).toString("hex")}.part`);
      try {
        await fs.promises.writeFile(part, Buffer.from(await f.arrayBuffer()), { flag: "wx" });
        await fs.promises.rename(part, path.join(dir, name));
      } catch (err) {
        await fs.promises.rm(part, { force: true });
        throw err;
      }
      saved.push(fileInfo(threadId, dir, name, clean !== f.name ? f.name : undefined));
    }
    return c.json({
      success: saved.length > 0,
      files: saved,
      message: saved.length ? `Successfully uploaded ${saved.length} file(s)` : "No valid files were uploaded",
      skipped_files: skipped,
    });
  });

  app.get("/threads/:thread_id/uploads/list", async (c) => {
    const threadId = badThreadId(c.req.param("thread_id"));
    const dir = path.join(userDataDir(ctx.options.baseDir, user, threadId), "uploads");
    let names: string[] = [];
    try {
      names = (await fs.promises.readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isFile() && !d.name.startsWith("."))
        .map((d) => d.name)
        .sort();
    } catch {
      names = [];
    }
    const files = names.map((n) => fileInfo(threadId, dir, n));
    return c.json({ files, count: files.length });
  });

  app.delete("/threads/:thread_id/uploads/:filename", async (c) => {
    const threadId = badThreadId(c.req.param("thread_id"));
    const raw = c.req.param("filename");
    const clean = sanitizeFilename(raw);
    if (!clean || clean !== raw) throw new HttpError(400, `Invalid filename: ${JSON.stringify(raw)}`);
    const dir = path.join(userDataDir(ctx.options.baseDir, user, threadId), "uploads");
    const full = path.join(dir, clean);
    let st: fs.Stats;
    try {
      st = await fs.promises.lstat(full);
    } catch {
      throw new HttpError(404, `File not found: ${clean}`);
    }
    if (!st.isFile() && !st.isSymbolicLink()) throw new HttpError(400, `Not a file: ${clean}`);
    await fs.promises.rm(full, { force: true });
    return c.json({ success: true, message: `Deleted ${clean}` });
  });
}
