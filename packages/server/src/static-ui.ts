import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Hono } from "hono";
import { guessMimeType } from "@deerflow-ts/harness";

/**
 * The built UI of the `@deerflow-ts/web` package (an optional peer: install it beside this package to serve
 * the UI), found by package resolution; without it, `packages/web/dist` beside this package in a checkout.
 */
export function defaultWebDist(): string {
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve("@deerflow-ts/web/package.json")), "dist");
  } catch {
    return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist");
  }
}

/** The command that builds the web UI (from the repository root). */
export const WEB_BUILD_COMMAND = "npm run build:web";

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/**
 * On every UI answer: no page of any origin may frame the UI. Signed in, its pages create tokens, change
 * roles and delete accounts with one click, and a page of the same site (another port of this host, a
 * sibling subdomain) gets the SameSite=Lax session cookie into its frames, so a transparent frame under
 * its own button would make those clicks for it. The UI never frames itself (its previews are `srcdoc`).
 */
export const UI_FRAME_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": "frame-ancestors 'none'",
});

/**
 * The page served at `/` (and every SPA route) while the web UI is not
 * built: it says what to run instead of leaving the user at a bare 404. The
 * API keeps working.
 */
export function webUiMissingPage(dir: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>DeerFlow: web UI not built</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:4rem auto;padding:0 1rem;color:#1d2129}code,pre{background:#f2f3f5;border-radius:6px}code{padding:1px 5px}pre{padding:10px 14px}</style></head>
<body>
<h1>The DeerFlow gateway is running, but its web UI is not built</h1>
<p>No <code>index.html</code> was found in <code>${escapeHtml(dir)}</code>. From the repository root, run:</p>
<pre>${WEB_BUILD_COMMAND}</pre>
<p>then reload this page (no restart needed). <code>npm start</code> builds it on the first start.</p>
<p>The API is available meanwhile: <a href="/health">/health</a>, <a href="/api/models">/api/models</a>.</p>
</body>
</html>
`;
}

/**
 * Serve a built SPA from `dir` at `/`: real files when they exist, otherwise
 * `index.html` (client-side routing). Never answers under `/api`. While
 * `dir/index.html` is missing, page routes get {@link webUiMissingPage}
 * (HTTP 503) and asset paths fall through to the JSON 404.
 */
export function registerStaticUi(app: Hono, dir: string): void {
  const root = path.resolve(dir);
  app.get("*", async (c, next) => {
    const pathname = decodeURIComponent(new URL(c.req.url).pathname);
    if (pathname === "/api" || pathname.startsWith("/api/") || pathname === "/health") return next();
    if (!fs.existsSync(path.join(root, "index.html"))) {
      // A page route (no file extension) gets instructions; a missing asset stays a 404.
      if (path.extname(pathname)) return next();
      return c.html(webUiMissingPage(root), 503, { "Cache-Control": "no-store", ...UI_FRAME_HEADERS });
    }
    let file = path.resolve(root, "." + pathname);
    const inside = file === root || file.startsWith(root + path.sep);
    if (!inside || !fs.existsSync(file) || fs.statSync(file).isDirectory()) file = path.join(root, "index.html");
    const body = await fs.promises.readFile(file);
    const type = guessMimeType(file);
    const cache = file.includes(`${path.sep}assets${path.sep}`) ? "public, max-age=31536000, immutable" : "no-cache";
    return c.body(body, 200, { "Content-Type": type.startsWith("text/") ? `${type}; charset=utf-8` : type, "Cache-Control": cache, ...UI_FRAME_HEADERS });
  });
}
