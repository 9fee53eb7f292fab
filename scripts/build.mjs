#!/usr/bin/env node
// `npm run build`: compiles every workspace package into its dist/ for publishing.
//
// The sources import each other with extensionless relative paths ("./config", "../errors"), which Node's ESM
// loader does not resolve, so plain tsc output would not run: esbuild bundles each package's entry points
// (ESM, code splitting so the entries of one package share their modules, every npm package — our own
// workspace packages included — left as an import). tsc writes the .d.ts of the library packages, and their
// relative specifiers are then rewritten to the explicit `.js` files Node-style type resolution needs. The
// web UI is built by its own vite config. Files the packages ship but the repository keeps elsewhere (bundled
// skills, the sandbox Dockerfile, config.example.yaml, LICENSE) are copied in.
//
//   node scripts/build.mjs [--no-types] [--no-web] [package…]   (packages: harness server cli web)
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const withTypes = !args.includes("--no-types");
const withWeb = !args.includes("--no-web");
const only = args.filter((a) => !a.startsWith("--"));
const wanted = (name) => only.length === 0 || only.includes(name);

/** Entry points (relative to the package's src/) of each compiled package, in build order. */
const PACKAGES = [
  { name: "harness", entries: "every index.ts", types: true, assets: [["skills", "skills"], ["docker/sandbox/Dockerfile", "sandbox/Dockerfile"]] },
  { name: "server", entries: ["index.ts", "testing/index.ts", "provisioner/index.ts"], types: true, assets: [] },
  { name: "cli", entries: ["main.ts"], types: false, assets: [["config.example.yaml", "config.example.yaml"]] },
];

const log = (line) => console.log(`[build] ${line}`);

function run(cmd, argv, cwd) {
  const r = spawnSync(cmd, argv, { cwd, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} failed in ${cwd} (exit ${r.status ?? r.signal})`);
}

function copyShipped(pkgDir, assets) {
  if (!assets.length) return;
  const out = path.join(pkgDir, "assets");
  fs.rmSync(out, { recursive: true, force: true });
  for (const [from, to] of assets) {
    fs.mkdirSync(path.dirname(path.join(out, to)), { recursive: true });
    fs.cpSync(path.join(ROOT, from), path.join(out, to), { recursive: true, filter: (src) => !/(^|\/)(__pycache__|\.DS_Store)$/.test(src) });
  }
}

/** Rewrites the relative specifiers of emitted .d.ts files to the file they name (`./x.js`, `./x/index.js`). */
function fixDeclarationSpecifiers(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".d.ts")) continue;
    const file = path.join(entry.parentPath ?? entry.path, entry.name);
    const text = fs.readFileSync(file, "utf8");
    const fixed = text.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']*|\.{1,2})(["'])/g, (all, pre, spec, post) => {
      if (/\.(js|mjs|cjs|json)$/.test(spec)) return all;
      const base = path.resolve(path.dirname(file), spec);
      if (fs.existsSync(`${base}.d.ts`)) return `${pre}${spec}.js${post}`;
      if (fs.existsSync(path.join(base, "index.d.ts"))) return `${pre}${spec.replace(/\/$/, "")}/index.js${post}`;
      return all;
    });
    if (fixed !== text) fs.writeFileSync(file, fixed);
  }
}

/**
 * The entry files of a package. The harness exports every subsystem folder as a subpath
 * (`@deerflow-ts/harness/config`, `…/sandbox/docker`: the `./*` export), so each `index.ts` under its src/ is
 * an entry; a command that needs only config and errors then loads only those modules, not the whole harness.
 */
function entryPointsOf(dir, entries) {
  const src = path.join(dir, "src");
  if (entries !== "every index.ts") return entries.map((e) => path.join(src, e));
  return fs
    .readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name === "index.ts")
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

/** Empties dist/; without a types build, the .d.ts files of an earlier full build stay. */
function cleanDist(dist, all) {
  if (all || !fs.existsSync(dist)) return fs.rmSync(dist, { recursive: true, force: true });
  for (const entry of fs.readdirSync(dist, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && /\.(js|map)$/.test(entry.name)) fs.rmSync(path.join(entry.parentPath ?? entry.path, entry.name));
  }
}

async function buildPackage(pkg) {
  const dir = path.join(ROOT, "packages", pkg.name);
  const dist = path.join(dir, "dist");
  const started = Date.now();
  cleanDist(dist, withTypes && pkg.types);
  await build({
    entryPoints: entryPointsOf(dir, pkg.entries),
    outdir: dist,
    outbase: path.join(dir, "src"),
    entryNames: "[dir]/[name]",
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    // error and class names are part of what users see (DeerFlowError subclasses, tool names)
    keepNames: true,
    logLevel: "warning",
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: false } },
  });
  if (withTypes && pkg.types) {
    run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", path.join(dir, "tsconfig.build.json")], dir);
    fixDeclarationSpecifiers(dist);
  }
  copyShipped(dir, pkg.assets);
  log(`${pkg.name}: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

for (const pkg of PACKAGES) if (wanted(pkg.name)) await buildPackage(pkg);
// npm does not copy the root LICENSE into a workspace's tarball: each package carries its own copy
for (const name of ["harness", "server", "cli", "web"]) fs.copyFileSync(path.join(ROOT, "LICENSE"), path.join(ROOT, "packages", name, "LICENSE"));
if (withWeb && wanted("web")) {
  const started = Date.now();
  run("npm", ["run", "build", "-w", "@deerflow-ts/web"], ROOT);
  log(`web: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
