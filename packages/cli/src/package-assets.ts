import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CLI_PACKAGE = "deerflow-ts";

/**
 * This package's root folder: the nearest parent holding a package.json named `deerflow-ts`. Walked up to
 * rather than fixed, since this module runs from `src/…` in a checkout and from the bundled `dist/main.js`
 * when installed.
 */
function cliPackageRoot(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    try {
      if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === CLI_PACKAGE) return dir;
    } catch {
      // not ours: keep walking
    }
    if (path.dirname(dir) === dir) return path.resolve(start, "..");
  }
}

/** Whether this CLI runs from a checkout of the repository (its `src/` is there) rather than an installed package. */
export function runsFromCheckout(): boolean {
  return existsSync(path.join(cliPackageRoot(), "src"));
}

/**
 * A file this package ships: `assets/<asset>` when installed (the build copies it there), the repository's
 * own `<repo>/<checkoutPath>` in a checkout, so an edit there is live without a build.
 */
export function cliAssetPath(asset: string, checkoutPath: string): string {
  const root = cliPackageRoot();
  return runsFromCheckout() ? path.resolve(root, "..", "..", checkoutPath) : path.join(root, "assets", asset);
}

/**
 * The folder of the `@deerflow-ts/web` package (the prebuilt UI is its `dist/`), found by package resolution
 * from this module: the workspace's packages/web in a checkout, node_modules/@deerflow-ts/web when installed.
 */
export function webPackageDir(): string {
  try {
    return path.dirname(createRequire(import.meta.url).resolve("@deerflow-ts/web/package.json"));
  } catch {
    return path.resolve(cliPackageRoot(), "..", "web");
  }
}
