import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import type { Hono } from "hono";
import type { GatewayContext } from "../context";
import { FORCE_ATTACHMENT_TYPES, guessContentType } from "../files/mime";
import { userDataDir } from "../files/thread-dirs";
import { HttpError } from "../http-error";
import { checkThreadId } from "../validate";

/** A parsed single byte range (inclusive). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Parse a `Range` header for a file of `size` bytes. `undefined` = serve the
 * whole file (no header, not `bytes=`, or several ranges); `"unsatisfiable"` → 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header.trim());
  if (!m) return header.trim().toLowerCase().startsWith("bytes=") && !header.includes(",") ? "unsatisfiable" : undefined;
  const [, a, b] = m;
  if (a === "" && b === "") return "unsatisfiable";
  if (a === "") {
    const suffix = Number(b);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  const end = b === "" ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}

function disposition(kind: "inline" | "attachment", name: string): string {
  return `${kind}; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * Resolve `mnt/user-data/...` segments to a real file under the thread's
 * user-data dir. 400 outside `mnt/user-data`, 403 on traversal or symlink
 * escape, 404 when missing, 400 for a directory.
 */
export async function resolveArtifact(root: string, segments: string[]): Promise<{ file: string; size: number }> {
  if (segments[0] !== "mnt" || segments[1] !== "user-data") throw new HttpError(400, "Artifact path must start with mnt/user-data");
  const rest = segments.slice(2).filter((s) => s !== "");
  for (const s of rest) {
    if (s === ".." || s === "." || s.includes("/") || s.includes("\\") || s.includes("\0")) throw new HttpError(403, "Access denied: path traversal detected");
  }
  if (!rest.length) throw new HttpError(400, "Artifact path is a directory");
  const target = path.join(root, ...rest);
  if (!isInside(root, target)) throw new HttpError(403, "Access denied: path traversal detected");
  let realRoot: string;
  let realTarget: string;
  try {
    realTarget = await fs.promises.realpath(target);
    realRoot = await fs.promises.realpath(root);
  } catch {
    throw new HttpError(404, `Artifact not found: /${segments.join("/")}`);
  }
  if (!isInside(realRoot, realTarget)) throw new HttpError(403, "Access denied: path escapes the thread's user-data directory");
  const st = await fs.promises.stat(realTarget);
  if (st.isDirectory()) throw new HttpError(400, "Artifact path is a directory");
  if (!st.isFile()) throw new HttpError(400, "Artifact path is not a regular file");
  return { file: realTarget, size: st.size };
}

/** Artifact download endpoint (§3.3). */
export function registerArtifactRoutes(app: Hono, ctx: GatewayContext): void {
  app.get("/threads/:thread_id/artifacts/*", async (c) => {
    const threadId = checkThreadId(c.req.param("thread_id"));
    const pathname = new URL(c.req.url).pathname;
    const marker = "/artifacts/";
    const rawRel = pathname.slice(pathname.indexOf(marker) + marker.length);
    let segments: string[];
    try {
      segments = rawRel.split("/").map((s) => decodeURIComponent(s));
    } catch {
      throw new HttpError(400, "Malformed artifact path encoding");
    }
    const root = userDataDir(ctx.options.baseDir, ctx.options.userId, threadId);
    const { file, size } = await resolveArtifact(root, segments);
    const head = Buffer.alloc(Math.min(size, 4096));
    if (head.length) {
      const fh = await fs.promises.open(file, "r");
      try {
        await fh.read(head, 0, head.length, 0);
      } finally {
        await fh.close();
      }
    }
    const type = guessContentType(file, head);
    const download = c.req.query("download") === "true" || c.req.query("download") === "1";
    const kind = download || FORCE_ATTACHMENT_TYPES.has(type) ? "attachment" : "inline";
    const textual = type.startsWith("text/") || type === "application/json";
    const headers: Record<string, string> = {
      "Content-Type": textual ? `${type}; charset=utf-8` : type,
      "Content-Disposition": disposition(kind, path.basename(file)),
      "Accept-Ranges": "bytes",
      "X-Content-Type-Options": "nosniff",
    };
    const range = parseRange(c.req.header("range"), size);
    if (range === "unsatisfiable") {
      return new Response(null, { status: 416, headers: { ...headers, "Content-Range": `bytes */${size}` } });
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    const length = size === 0 ? 0 : end - start + 1;
    headers["Content-Length"] = String(length);
    if (range) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    const body = length === 0 ? null : (Readable.toWeb(fs.createReadStream(file, { start, end })) as unknown as ReadableStream);
    return new Response(body, { status: range ? 206 : 200, headers });
  });
}
