import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The root folder of the package that holds `moduleUrl`: the nearest parent folder whose package.json is
 * named `packageName`. Found by walking up rather than by a fixed `../..`, because the same module runs from
 * `src/<subsystem>/<file>.ts` in a checkout and from a bundled chunk in `dist/` when installed.
 */
export function packageRootOf(moduleUrl: string, packageName: string): string | undefined {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === packageName) return dir;
      } catch {
        // an unreadable package.json on the way up is not ours; keep walking
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Where a file the package ships lives. An installed package carries it as `assets/<asset>` (the build copies
 * it there); a checkout of the repository (the package has its `src/`) uses the repository's own copy at
 * `<repo>/<checkoutPath>`, so an edit there is live without a build.
 */
export function packageAssetPath(moduleUrl: string, packageName: string, asset: string, checkoutPath: string): string {
  const root = packageRootOf(moduleUrl, packageName);
  if (root === undefined) return path.resolve(path.dirname(fileURLToPath(moduleUrl)), "assets", asset);
  if (existsSync(path.join(root, "src"))) return path.resolve(root, "..", "..", checkoutPath);
  return path.join(root, "assets", asset);
}
