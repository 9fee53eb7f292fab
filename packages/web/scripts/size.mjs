#!/usr/bin/env node
// Prints the gzip size of the JavaScript the browser loads initially (the entry chunk and its static imports,
// as listed by index.html's <script>/<link rel=modulepreload>); lazy chunks (KaTeX) are reported separately.
// Builds first unless --no-build is given. Last line: {"js_gzip_kb": …}.
import { execSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
if (!process.argv.includes("--no-build") || !existsSync(join(dist, "index.html"))) {
  execSync("npx vite build", { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
}
const html = readFileSync(join(dist, "index.html"), "utf8");
const initial = new Set();
for (const m of html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)) initial.add(m[1]);
// Follow static imports of the initial chunks.
const queue = [...initial];
while (queue.length) {
  const file = queue.pop();
  const code = readFileSync(join(dist, file), "utf8");
  for (const m of code.matchAll(/(?:^|[;\s])import\s*(?:[^"'()]*?from\s*)?["']\.\/([^"']+\.js)["']/g)) {
    const dep = `assets/${m[1]}`;
    if (!initial.has(dep)) {
      initial.add(dep);
      queue.push(dep);
    }
  }
}
const gz = (file) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
let total = 0;
for (const f of initial) {
  const size = gz(f);
  total += size;
  console.log(`initial  ${f}  ${(size / 1024).toFixed(1)} KB gzip`);
}
let lazy = 0;
for (const f of readdirSync(join(dist, "assets")).filter((f) => f.endsWith(".js"))) {
  if (initial.has(`assets/${f}`)) continue;
  const size = gz(`assets/${f}`);
  lazy += size;
  console.log(`lazy     assets/${f}  ${(size / 1024).toFixed(1)} KB gzip`);
}
const kb = Math.round((total / 1024) * 10) / 10;
console.log(`initial JS total: ${kb} KB gzip (target < 400 KB); lazy JS: ${(lazy / 1024).toFixed(1)} KB gzip`);
console.log(JSON.stringify({ js_gzip_kb: kb, lazy_js_gzip_kb: Math.round((lazy / 1024) * 10) / 10, target_kb: 400, ok: kb < 400 }));
