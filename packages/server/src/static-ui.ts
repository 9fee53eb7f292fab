import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Hono } from "hono";
import { guessMimeType } from "@deerflow/harness";

/** `packages/web/dist` relative to this package. */
export function defaultWebDist(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist");
}

/**
 * Serve a built SPA from `dir` at `/`: real files when they exist, otherwise
 * `index.html` (client-side routing). Never answers under `/api`.
 */
export function registerStaticUi(app: Hono, dir: string): void {
  const root = path.resolve(dir);
  app.get("*", async (c, next) => {
    const pathname = decodeURIComponent(new URL(c.req.url).pathname);
    if (pathname === "/api" || pathname.startsWith("/api/") || pathname === "/health") return next();
    if (!fs.existsSync(path.join(root, "index.html"))) return next();
    let file = path.resolve(root, "." + pathname);
    const inside = file === root || file.startsWith(root + path.sep);
    if (!inside || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(root, "index.html");
    const body = await fs.promises.readFile(file);
    const type = guessMimeType(file);
    const cache = file.includes(`${path.sep}assets${path.sep}`) ? "public, max-age=31536000, immutable" : "no-cache";
    return c.body(body, 200, { "Content-Type": type.startsWith("text/") ? `${type}; charset=utf-8` : type, "Cache-Control": cache });
  });
}
