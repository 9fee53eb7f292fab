import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { resolveArtifact, threadPaths } from "@deerflow/harness";
import type { Hono } from "hono";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { checkThreadId } from "../validate";

/** Content types always served as attachments (XSS guard). */
export const FORCE_ATTACHMENT_TYPES: ReadonlySet<string> = new Set(["text/html", "application/xhtml+xml", "image/svg+xml"]);

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

/**
 * Artifact download endpoint (§3.3): inline (attachment for `?download=true`
 * and for HTML/SVG), single byte ranges, streamed from disk.
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
    const paths = threadPaths(ctx.options.baseDir, ctx.options.userId, threadId);
    const { hostPath: file, size, mimeType: type } = await resolveArtifact(paths, `/${segments.join("/")}`);
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
