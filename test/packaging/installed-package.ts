/**
 * Packs every published workspace package (`npm pack`) and installs the tarballs into an empty folder outside
 * the repository, as a new user's `npm install deerflow-ts` would: the pack-install test and
 * `npm run bench:startup` run the `deerflow` command from there, with no repository around it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** An install of the packed tarballs in a temporary folder. */
export interface InstalledPackage {
  /** The folder holding node_modules (the "project" of the new user). */
  readonly dir: string;
  /** `node_modules/.bin/deerflow`. */
  readonly bin: string;
  /** The packed tarballs (file names). */
  readonly tarballs: readonly string[];
  /** Every file each tarball holds, by package name (`npm pack --json`). */
  readonly packedFiles: Readonly<Record<string, readonly string[]>>;
  /** Milliseconds spent in `npm install`. */
  readonly installMs: number;
  /** Removes the folder. */
  close(): void;
}

/** Options of {@link packAndInstall}. */
export interface PackAndInstallOptions {
  /** Progress lines. */
  log?(line: string): void;
}

function npm(args: string[], cwd: string): string {
  const r = spawnSync("npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  if (r.status !== 0) throw new Error(`npm ${args.join(" ")} failed in ${cwd} (exit ${r.status}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/**
 * Compiles the packages (`npm run build`'s JavaScript; the web UI only when it was never built), packs every
 * non-private workspace, and installs all tarballs with one `npm install` into a fresh folder under the
 * system temp dir. Install scripts stay off (as everywhere in this repository): the one native module,
 * better-sqlite3, gets the binary the repository's own install compiled for the same version and Node.
 */
export function packAndInstall(options: PackAndInstallOptions = {}): InstalledPackage {
  const log = options.log ?? (() => {});
  const webBuilt = existsSync(path.join(REPO, "packages/web/dist/index.html"));
  // A build empties dist/ before it writes it again, and other tests (the gateway image's staging) read dist/
  // at the same time: rebuild only what is older than its sources (CI builds just before the tests).
  if (webBuilt && compiledIsCurrent()) log("the compiled packages are newer than their sources: packing them as they are");
  else {
    log(`building the packages${webBuilt ? "" : " and the web UI"}…`);
    execFileSync(process.execPath, [path.join(REPO, "scripts/build.mjs"), "--no-types", ...(webBuilt ? ["--no-web"] : [])], { cwd: REPO, stdio: "pipe" });
  }

  const work = mkdtempSync(path.join(os.tmpdir(), "deerflow-pack-"));
  try {
    const tgz = path.join(work, "tgz");
    mkdirSync(tgz);
    const packed = JSON.parse(npm(["pack", "--workspaces", "--json", "--pack-destination", tgz], REPO)) as { name: string; filename: string; files: { path: string }[] }[];
    const tarballs = packed.map((p) => p.filename);
    const packedFiles = Object.fromEntries(packed.map((p) => [p.name, p.files.map((f) => f.path)]));
    log(`packed ${tarballs.join(", ")}`);

    const dir = path.join(work, "app");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "deerflow-new-user", private: true }, null, 2));
    const started = Date.now();
    npm(["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", ...tarballs.map((t) => path.join(tgz, t))], dir);
    const installMs = Date.now() - started;
    log(`npm install of the tarballs: ${(installMs / 1000).toFixed(1)} s`);
    provideSqliteBinary(dir);
    return { dir, bin: path.join(dir, "node_modules/.bin/deerflow"), tarballs, packedFiles, installMs, close: () => rmSync(work, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    throw err;
  }
}

/** Copies the repository's compiled better-sqlite3 binary into the install (same package version only). */
function provideSqliteBinary(dir: string): void {
  const version = (d: string) => (JSON.parse(readFileSync(path.join(d, "package.json"), "utf8")) as { version: string }).version;
  const ours = path.join(REPO, "node_modules/better-sqlite3");
  const theirs = path.join(dir, "node_modules/better-sqlite3");
  const binary = "build/Release/better_sqlite3.node";
  if (!existsSync(theirs) || !existsSync(path.join(ours, binary))) return;
  if (version(ours) !== version(theirs)) throw new Error(`better-sqlite3 ${version(theirs)} was installed but the repository has ${version(ours)}: run npm install at the root`);
  mkdirSync(path.dirname(path.join(theirs, binary)), { recursive: true });
  copyFileSync(path.join(ours, binary), path.join(theirs, binary));
}

/** What each compiled package is built from (sources and the assets the build copies in), and its entry file. */
const COMPILED: ReadonlyArray<{ entry: string; from: readonly string[] }> = [
  { entry: "packages/harness/dist/index.js", from: ["packages/harness/src", "skills", "docker/sandbox/Dockerfile"] },
  { entry: "packages/server/dist/index.js", from: ["packages/server/src"] },
  { entry: "packages/cli/dist/main.js", from: ["packages/cli/src", "config.example.yaml"] },
];

/** The newest modification time of a file, or of any file below a folder. */
function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const e of readdirSync(p, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) newest = Math.max(newest, statSync(path.join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/** True when every compiled package's entry was written after the last change to what it is built from. */
function compiledIsCurrent(): boolean {
  return COMPILED.every(({ entry, from }) => {
    const out = path.join(REPO, entry);
    if (!existsSync(out)) return false;
    const built = statSync(out).mtimeMs;
    return from.every((f) => !existsSync(path.join(REPO, f)) || newestMtime(path.join(REPO, f)) < built);
  });
}
