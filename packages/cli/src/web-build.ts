import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { webPackageDir } from "./package-assets";

/** The `@deerflow-ts/web` package: packages/web in a checkout, node_modules/@deerflow-ts/web when installed. */
const WEB_PACKAGE = webPackageDir();

/** The web UI build the gateway serves by default (`dist/` of the `@deerflow-ts/web` package). */
export const WEB_DIST = path.join(WEB_PACKAGE, "dist");

/** Outcome of {@link ensureWebBuild}. */
export interface WebBuildResult {
  /** `dist/index.html` exists now. */
  ready: boolean;
  /** A build ran in this call. */
  built: boolean;
  dist: string;
  /** Why the UI is not ready (no sources, failed build), with what to run. */
  reason?: string;
}

/** Options of {@link ensureWebBuild}. */
export interface EnsureWebBuildOptions {
  /** Repository root holding `packages/web` (default: the `@deerflow-ts/web` package this CLI resolves). */
  root?: string;
  /** Rebuild even when a build exists. */
  force?: boolean;
  /** Progress lines ("building the web UI…"). */
  log?(line: string): void;
  /** Build output (vite's own lines); default: discarded. */
  output?(chunk: string): void;
}

/**
 * Build the web UI on first start: when `packages/web/dist/index.html` is
 * missing, or older than a file of the web package's sources (after a `git
 * pull`, say — else the gateway would go on serving the old UI), and those
 * sources are present, run the workspace's `vite build` (the same as `npm run
 * build:web`). Never throws: a failed or impossible build is reported in
 * `reason`; a failed rebuild keeps serving the previous build.
 */
export async function ensureWebBuild(options: EnsureWebBuildOptions = {}): Promise<WebBuildResult> {
  const web = options.root ? path.join(path.resolve(options.root), "packages", "web") : WEB_PACKAGE;
  // the workspace root, where `npm run build -w` runs (an installed package has no sources, so never builds)
  const root = path.resolve(web, "..", "..");
  const dist = path.join(web, "dist");
  const built = builtAt(path.join(dist, "index.html"));
  const hasSources = existsSync(path.join(web, "package.json")) && existsSync(path.join(web, "index.html")) && existsSync(path.join(web, "src"));
  const stale = built !== undefined && hasSources && newestSource(web) > built;
  if (!options.force && built !== undefined && !stale) return { ready: true, built: false, dist };
  if (!hasSources) return { ready: false, built: false, dist, reason: `the web UI is not built and its sources are not in ${web}` };
  options.log?.(stale ? "Rebuilding the web UI (its sources changed since the last build)…" : "Building the web UI (first start only)…");
  const started = Date.now();
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.platform === "win32" ? "npm.cmd" : "npm", ["run", "build", "-w", "@deerflow-ts/web"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d: Buffer) => options.output?.(d.toString()));
    child.stderr.on("data", (d: Buffer) => options.output?.(d.toString()));
    child.on("error", () => resolve(-1));
    child.on("close", (c) => resolve(c ?? -1));
  });
  if (code === 0 && existsSync(path.join(dist, "index.html"))) {
    options.log?.(`Built the web UI in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    return { ready: true, built: true, dist };
  }
  const reason = `building the web UI failed (exit ${code}); run \`npm run build:web\` in ${root} to see why`;
  return existsSync(path.join(dist, "index.html")) ? { ready: true, built: false, dist, reason: `${reason} (serving the previous build)` } : { ready: false, built: false, dist, reason };
}

/** Modification time of the build's index.html, or undefined when there is no build. */
function builtAt(indexHtml: string): number | undefined {
  try {
    return statSync(indexHtml).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Newest modification time among the web package's sources (`src/**`, index.html, package.json, vite config). */
function newestSource(web: string): number {
  let newest = 0;
  const visit = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile()) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  visit(path.join(web, "src"));
  for (const f of ["index.html", "package.json", "vite.config.ts"]) {
    if (existsSync(path.join(web, f))) newest = Math.max(newest, statSync(path.join(web, f)).mtimeMs);
  }
  return newest;
}
