#!/usr/bin/env node
// Prints the gzip size of the JavaScript the browser loads initially (the entry chunk and its static imports,
// as listed by index.html's <script>/<link rel=modulepreload>); lazy chunks (KaTeX) are reported separately.
// Builds first unless --no-build is given (WEB_DIST measures another build folder). Last line: {"js_gzip_kb": …}.
import { execSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { INITIAL_JS_BUDGET_KB, measureBundle } from "./initial-js.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = process.env.WEB_DIST ?? join(root, "dist");
if (!process.argv.includes("--no-build") || !existsSync(join(dist, "index.html"))) {
  execSync("npx vite build", { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
}
const m = measureBundle(dist);
const kb = (bytes) => Math.round((bytes / 1024) * 10) / 10;
for (const c of m.initial) console.log(`initial  ${c.file}  ${kb(c.gzipBytes).toFixed(1)} KB gzip`);
for (const c of m.lazy) console.log(`lazy     ${c.file}  ${kb(c.gzipBytes).toFixed(1)} KB gzip`);
const total = kb(m.initialBytes);
console.log(`initial JS total: ${total} KB gzip (target ≤ ${INITIAL_JS_BUDGET_KB} KB); lazy JS: ${kb(m.lazyBytes)} KB gzip`);
console.log(JSON.stringify({ js_gzip_kb: total, lazy_js_gzip_kb: kb(m.lazyBytes), target_kb: INITIAL_JS_BUDGET_KB, ok: total <= INITIAL_JS_BUDGET_KB }));
