import { readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

// The CLI, server and web reach another workspace package only through its name (`@deerflow-ts/harness`,
// `@deerflow-ts/harness/testing`, `@deerflow-ts/server`…), never through a relative path into its src/:
// installed from npm the packages are separate folders holding dist/ only, so `../../harness/src/config`
// would not exist, and a bundle would carry a second copy of that package's modules.
const root = resolve(__dirname, "..");
const packagesDir = join(root, "packages");
const PACKAGES = ["harness", "server", "cli", "web"];

function walk(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (name === "node_modules" || name === "dist") return [];
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : /\.(ts|tsx|mts|js|mjs)$/.test(name) ? [p] : [];
  });
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|vi\.mock\(\s*['"]([^'"]+)['"]/g;

/** The other package whose src/ the relative specifier `spec` of `file` points into, if it does. */
function crossPackageSourceImport(file: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const own = relative(packagesDir, file).split(sep)[0];
  const target = relative(packagesDir, resolve(join(file, ".."), spec)).split(sep);
  if (target[0] === ".." || target[0] === own || !PACKAGES.includes(target[0])) return undefined;
  if (target[1] !== "src") return undefined;
  // the CLI has no library API to import by name: a test elsewhere (the web's end-to-end demo) may drive its sources
  if (target[0] === "cli" && relative(packagesDir, file).split(sep)[1] === "test") return undefined;
  return target[0];
}

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for relative and built-in ones. */
function packageOf(spec: string): string | undefined {
  if (spec.startsWith(".") || spec.startsWith("node:") || builtinModules.includes(spec.split("/")[0])) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

// Value imports only: `import type` is erased from the compiled JavaScript, so it needs no runtime dependency.
const VALUE_IMPORT = /^\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

describe("workspace packages import each other by name", () => {
  it("no file of a package imports another package's src/ by a relative path", () => {
    const offenders: string[] = [];
    for (const pkg of PACKAGES) {
      for (const file of ["src", "test", "bin"].flatMap((d) => walk(join(packagesDir, pkg, d)))) {
        const text = readFileSync(file, "utf8");
        for (const m of text.matchAll(IMPORT)) {
          const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
          if (crossPackageSourceImport(file, spec)) offenders.push(`${relative(root, file)} → ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the checker catches a path import into another package and allows the package name (control)", () => {
    const cli = join(packagesDir, "cli/src/commands/run.ts");
    expect(crossPackageSourceImport(cli, "../../../harness/src/config")).toBe("harness");
    expect(crossPackageSourceImport(join(packagesDir, "web/src/api/sse.ts"), "../../../harness/src/wire")).toBe("harness");
    expect(crossPackageSourceImport(cli, "../../../server/src")).toBe("server");
    expect(crossPackageSourceImport(cli, "../common")).toBeUndefined();
    expect(crossPackageSourceImport(cli, "@deerflow-ts/harness")).toBeUndefined();
    // a test may share another package's test helpers (they are never shipped)
    expect(crossPackageSourceImport(join(packagesDir, "cli/test/x.test.ts"), "../../harness/test/sandbox/image/helpers")).toBeUndefined();
    expect(crossPackageSourceImport(join(packagesDir, "web/test/e2e/x.test.ts"), "../../../cli/src/demo/demo-config")).toBeUndefined();
    expect(crossPackageSourceImport(join(packagesDir, "web/src/x.ts"), "../../cli/src/demo/demo-config")).toBe("cli");
  });

  it("every package a library's or the CLI's source loads at run time is one of its declared dependencies", () => {
    // installed from npm, a package sees only what its package.json declares (and what that pulls in):
    // an import that works in the workspace through hoisting would fail for a user
    const offenders: string[] = [];
    for (const pkg of ["harness", "server", "cli"]) {
      const manifest = JSON.parse(readFileSync(join(packagesDir, pkg, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
      const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {})]);
      for (const file of walk(join(packagesDir, pkg, "src"))) {
        for (const m of readFileSync(file, "utf8").matchAll(VALUE_IMPORT)) {
          const name = packageOf(m[1] ?? m[2]);
          if (name && !declared.has(name)) offenders.push(`${relative(root, file)} → ${name} (not in packages/${pkg}/package.json)`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the dependency check reads package names the way npm does (control)", () => {
    expect(packageOf("@deerflow-ts/harness/testing")).toBe("@deerflow-ts/harness");
    expect(packageOf("yaml")).toBe("yaml");
    expect(packageOf("node:fs")).toBeUndefined();
    expect(packageOf("fs/promises")).toBeUndefined();
    expect(packageOf("../config")).toBeUndefined();
    expect([..."import type { X } from \"hono\";\nimport { y } from \"zod\";".matchAll(VALUE_IMPORT)].map((m) => m[1])).toEqual(["zod"]);
  });
});
