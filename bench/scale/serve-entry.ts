/**
 * How the scale bench starts `deerflow serve`.
 *
 * `packages/cli/bin/deerflow.js` runs the TypeScript sources through tsx:
 * every process resolves, transforms (cached) and compiles ~500 modules
 * through tsx's loader hooks before it listens. That is 2–3 s per process
 * on a quiet 2-core machine and 10 s for four processes starting at once,
 * and it is paid again by every phase. The bench measures bursts, not
 * start-up, so by default it bundles the same CLI once with esbuild (the
 * compiler tsx itself uses, with the same transform options) and starts
 * every process from that one file. Third-party packages stay external and
 * are loaded from node_modules as under tsx; `import.meta.url` keeps naming
 * each source file, so paths the sources derive from it (bundled skills,
 * the web UI's dist, native modules resolved with createRequire) are the
 * same. `SCALE_ENTRY=tsx` starts processes from the CLI's own bin instead.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT, ServeProcess, startServe } from "../../packages/server/test/scale-out/helpers/serve-process";
import type { StartServeOptions } from "../../packages/server/test/scale-out/helpers/serve-process";

/** Where serve processes are started from. */
export interface ServeEntry {
  /** `bundle` (one prebuilt file) or `tsx` (the CLI's bin, as a user starts it). */
  readonly kind: "bundle" | "tsx";
  /** Start one `deerflow serve --port 0` and wait for its ready line. */
  start(opts: Omit<StartServeOptions, "noWait">): Promise<ServeProcess>;
  /** Remove the bundle. */
  close(): void;
}

const CLI_MAIN = path.join(REPO_ROOT, "packages/cli/src/main.ts");
// Under node_modules so the bundle's bare imports resolve to the repository's packages, as they do under tsx.
const BUILD_ROOT = path.join(REPO_ROOT, "node_modules/.cache/deerflow-bench-scale");
const READY = /DeerFlow is running at (http:\/\/\S+)/;
// tsx's own esbuild (a dependency of tsx, not of this repository), so the bundle is compiled as tsx compiles
const esbuild = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"))("esbuild") as typeof import("esbuild");

/** The entry named by `SCALE_ENTRY` (`bundle`, the default, or `tsx`). */
export async function serveEntry(kind = process.env.SCALE_ENTRY ?? "bundle"): Promise<ServeEntry> {
  if (kind === "tsx") return { kind: "tsx", start: (opts) => startServe(opts), close() {} };
  if (kind !== "bundle") throw new Error(`SCALE_ENTRY must be "bundle" or "tsx", got "${kind}"`);
  return bundleEntry();
}

async function bundleEntry(): Promise<ServeEntry> {
  fs.mkdirSync(BUILD_ROOT, { recursive: true });
  const dir = fs.mkdtempSync(path.join(BUILD_ROOT, "cli-"));
  const file = path.join(dir, "deerflow.mjs");
  try {
    await esbuild.build({
      stdin: {
        // what bin/deerflow.js does after registering tsx
        contents: `import { main } from ${JSON.stringify(CLI_MAIN)};\nconst code = await main(process.argv.slice(2));\nif (code !== null) process.exit(code);\n`,
        resolveDir: path.dirname(CLI_MAIN),
        sourcefile: "deerflow-entry.ts",
        loader: "ts",
      },
      outfile: file,
      bundle: true,
      platform: "node",
      format: "esm",
      // tsx's transform: current Node as target, names kept, whitespace minified, inline source maps
      // (the process runs with --enable-source-maps, as tsx turns them on). tsx finds no tsconfig.json
      // from a deployment's directory, so none is read here either.
      target: `node${process.versions.node}`,
      keepNames: true,
      minifyWhitespace: true,
      sourcemap: "inline",
      tsconfigRaw: "{}",
      // the workspace packages' TypeScript sources, as under the CLI's bin in a checkout (not their dist/)
      conditions: ["deerflow-source"],
      logLevel: "warning",
      plugins: [
        {
          name: "deerflow-sources-only",
          setup(b) {
            // the workspace packages are bundled; every other package is loaded from node_modules at run time
            b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith("@deerflow-ts/") ? undefined : { path: a.path, external: true }));
            b.onLoad({ filter: /\/packages\/[^/]+\/src\/.*\.ts$/ }, (a) => ({
              contents: fs.readFileSync(a.path, "utf8").replaceAll("import.meta.url", JSON.stringify(pathToFileURL(a.path).href)),
              loader: "ts",
            }));
          },
        },
      ],
    });
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    kind: "bundle",
    start: (opts) => startBundled(file, opts),
    close: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** {@link startServe}'s process, environment and ready line, from the bundle. */
async function startBundled(file: string, opts: Omit<StartServeOptions, "noWait">): Promise<ServeProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", DEERFLOW_SKIP_WEB_BUILD: "1", ...opts.env };
  delete env.DEER_FLOW_AUTH_DISABLED;
  const proc: ChildProcess = spawn(
    process.execPath,
    ["--enable-source-maps", file, "serve", "--config", opts.configPath, "--data-dir", opts.dataDir, "--port", "0", "--no-web-build", ...(opts.args ?? [])],
    { cwd: path.dirname(opts.configPath), env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  const p = new ServeProcess(opts.name, proc);
  try {
    p.url = (await p.waitFor(READY, 90_000))[1]!;
  } catch (err) {
    await p.stop();
    throw err;
  }
  return p;
}
