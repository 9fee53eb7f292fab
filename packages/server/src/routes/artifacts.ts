import path from "node:path";
import { Readable } from "node:stream";
import { openArtifact, threadPaths } from "@deerflow-ts/harness";
import type { Hono } from "hono";
import { userOf } from "../auth";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { API_SECURITY_HEADERS, contentDisposition, servedFile } from "../security";
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

/**
 * Artifact download endpoint (`/threads/{id}/artifacts/{path}`), which serves every file of a thread
 * (outputs, uploads, workspace): only passive types inline (text as
 * `text/plain`, images but SVG, PDF, audio, video; see `servedFile`),
 * everything else as an attachment, always with `Content-Security-Policy:
 * sandbox` and `nosniff`; single byte ranges, streamed from disk.
 */
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
    // path checks (prefix, traversal, symlink escape), 404/400 and the MIME type
    // are the harness's, shared with DeerFlowClient.getArtifact
    // the caller's folder of the thread (another user's thread was answered 404 by the thread-access middleware)
    const paths = threadPaths(ctx.options.baseDir, userOf(c).id, threadId);
    // The file is opened once, checked, and streamed from that descriptor: the agent's sandbox writes these
    // directories, and a name looked up again later could lead somewhere else.
    const { handle, hostPath: file, size, mimeType: type } = await openArtifact(paths, `/${segments.join("/")}`);
    let streaming = false;
    try {
      const download = c.req.query("download") === "true" || c.req.query("download") === "1";
      const served = servedFile(type, download);
      const headers: Record<string, string> = {
        "Content-Type": served.contentType,
        "Content-Disposition": contentDisposition(served.disposition, path.basename(file)),
        "Accept-Ranges": "bytes",
        ...API_SECURITY_HEADERS,
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
      // The stream owns the descriptor from here (closed at its end or when the client goes away).
      const body = length === 0 || c.req.method === "HEAD" ? null : (Readable.toWeb(handle.createReadStream({ start, end, autoClose: true })) as unknown as ReadableStream);
      streaming = body !== null;
      return new Response(body, { status: range ? 206 : 200, headers });
    } finally {
      if (!streaming) await handle.close();
    }
  });
}
