// What the browser loads eagerly: the scripts and modulepreloads index.html names, plus every chunk they import
// statically. Lazy chunks (KaTeX) are the rest. Sizes are gzip level 9, in bytes. Shared by `npm run size -w` and
// the size guard in the e2e tests (which measure the build those tests already made).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** The initial-JS budget, in KiB of gzip. */
export const INITIAL_JS_BUDGET_KB = 150;

/** Measure a built `dist`: `{ initial, lazy, initialBytes, lazyBytes }` (lists of `{ file, gzipBytes }`). */
export function measureBundle(dist) {
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const initial = new Set();
  for (const m of html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)) initial.add(m[1]);
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
  const list = (files) => files.map((file) => ({ file, gzipBytes: gz(file) }));
  const all = readdirSync(join(dist, "assets")).filter((f) => f.endsWith(".js")).map((f) => `assets/${f}`);
  const eager = list([...initial]);
  const lazy = list(all.filter((f) => !initial.has(f)));
  const sum = (xs) => xs.reduce((n, x) => n + x.gzipBytes, 0);
  return { initial: eager, lazy, initialBytes: sum(eager), lazyBytes: sum(lazy) };
}
