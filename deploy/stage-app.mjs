#!/usr/bin/env node
// Lays out the Docker build context of deploy/Dockerfile: the gateway as installed on this machine
// (after `npm ci` and `npm run build`), production dependencies only, under <out>/app.
//
//   node deploy/stage-app.mjs [out]          (default out: deploy/.build)
//   docker build -f deploy/Dockerfile -t deerflow-ts:local deploy/.build
//
// The image is built from what this machine installed instead of running `npm ci` inside the build
// (docs/deploy.md says why). Files are hard-linked where the filesystem allows, so staging takes a
// second or two and little space; the context then holds only what the image needs (no .git, tests,
// docs, development dependencies), which keeps `docker build` from sending and hashing ~400 MB.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Top-level files and folders of the repository the running gateway reads. */
const TOP_LEVEL = ["package.json", "package-lock.json", "config.example.yaml", "LICENSE", "skills"];
/** Never staged, at any depth below packages/: tests, local data dirs, tool caches. */
const SKIP_NAMES = new Set(["test", ".deer-flow", ".vite", ".cache", "node_modules"]);
/** Web UI sources: the image serves the prebuilt packages/web/dist and never rebuilds it. */
const WEB_SOURCES = new Set(["src", "scripts", "index.html", "vite.config.ts"]);

/**
 * Whether a workspace package runs from its compiled dist/ (`npm run build`): its exports, main or bin
 * name dist/. Such a package is staged without src/, so the CLI entry takes the compiled path (it runs
 * the TypeScript sources through tsx only where src/ is present) and tsx stays out of the image.
 * @param {string} dir
 */
function runsCompiled(dir) {
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const bins = typeof pkg.bin === "string" ? [pkg.bin] : Object.values(pkg.bin ?? {});
  const compiled =
    JSON.stringify([pkg.exports ?? null, pkg.main ?? null]).includes("dist/") ||
    bins.some((b) => existsSync(path.join(dir, b)) && readFileSync(path.join(dir, b), "utf8").includes("dist/"));
  if (compiled && !existsSync(path.join(dir, "dist"))) throw new Error(`${path.join(dir, "dist")} is missing: run \`npm run build\` first (the image runs the compiled packages)`);
  return compiled;
}

/** Hard-link (else copy) one file; recreate symlinks as they are (workspace links stay relative). */
function place(src, dest) {
  const st = lstatSync(src);
  mkdirSync(path.dirname(dest), { recursive: true });
  if (st.isSymbolicLink()) symlinkSync(readlinkSync(src), dest);
  else if (st.isDirectory()) for (const name of readdirSync(src)) place(path.join(src, name), path.join(dest, name));
  else if (st.isFile()) {
    try {
      linkSync(src, dest);
    } catch {
      copyFileSync(src, dest);
    }
  }
}

/** Copy a package folder without its nested node_modules (those are staged one package at a time). */
function placePackage(src, dest, skip = new Set(["node_modules"])) {
  mkdirSync(dest, { recursive: true });
  for (const name of readdirSync(src)) {
    if (skip.has(name)) continue;
    place(path.join(src, name), path.join(dest, name));
  }
}

/**
 * Stage the app under `<out>/app` and return that path. Throws when the install or the web build is
 * missing, naming the command that makes it.
 * @param {string} out
 */
export function stageApp(out) {
  if (!existsSync(path.join(REPO, "node_modules"))) throw new Error(`no node_modules in ${REPO}: run \`npm ci\` first`);
  if (!existsSync(path.join(REPO, "packages/web/dist/index.html"))) throw new Error(`the web UI is not built (${path.join(REPO, "packages/web/dist/index.html")} is missing): run \`npm run build\` (or \`npm run build:web\`) first`);
  const app = path.join(out, "app");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  for (const name of TOP_LEVEL) if (existsSync(path.join(REPO, name))) place(path.join(REPO, name), path.join(app, name));
  for (const pkg of readdirSync(path.join(REPO, "packages"))) {
    const skip = new Set(SKIP_NAMES);
    if (pkg === "web") for (const n of WEB_SOURCES) skip.add(n);
    else if (runsCompiled(path.join(REPO, "packages", pkg))) skip.add("src");
    placePackage(path.join(REPO, "packages", pkg), path.join(app, "packages", pkg), skip);
  }
  // Every package the production install needs, as npm resolved it (`npm ls` reads only the local
  // tree and the lockfile): hoisted ones under node_modules/, nested ones under their dependant.
  const listed = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], { cwd: REPO, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith(REPO + path.sep) && l.includes(`${path.sep}node_modules${path.sep}`));
  for (const dir of listed) {
    const rel = path.relative(REPO, dir);
    const dest = path.join(app, rel);
    if (existsSync(dest)) continue;
    if (lstatSync(dir).isSymbolicLink()) place(dir, dest); // a workspace package: keep the link into packages/
    else placePackage(dir, dest);
  }
  return app;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = path.resolve(process.argv[2] ?? path.join(REPO, "deploy", ".build"));
  const started = Date.now();
  const app = stageApp(out);
  console.log(`staged ${app} in ${((Date.now() - started) / 1000).toFixed(1)} s; build with: docker build -f deploy/Dockerfile ${out}`);
}
