import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const PACKAGES: Record<string, string> = { "@deerflow-ts/harness": "packages/harness", "@deerflow-ts/server": "packages/server", "deerflow-ts": "packages/cli" };

/** `import { a, b as c, type T } from "spec"` lines of the TypeScript/JavaScript code blocks of the docs. */
function docImports(): Array<{ where: string; names: string[]; spec: string }> {
  const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const out: Array<{ where: string; names: string[]; spec: string }> = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const block of text.matchAll(/```(?:ts|typescript|js|javascript|tsx)\n([\s\S]*?)```/g)) {
      for (const m of block[1].matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+"([^"]+)"/gm)) {
        if (m[1]) continue; // type-only imports have nothing to check at run time
        const names = m[2].split(",").map((n) => n.trim()).filter((n) => n && !n.startsWith("type ")).map((n) => n.split(/\s+as\s+/)[0]);
        out.push({ where: file, names, spec: m[3] });
      }
    }
  }
  return out;
}

/** The source module a package specifier names (its `deerflow-source` export), or undefined for another package. */
function sourceOf(spec: string): string | undefined {
  const pkg = Object.keys(PACKAGES).find((p) => spec === p || spec.startsWith(`${p}/`));
  if (!pkg) return undefined;
  const manifest = JSON.parse(readFileSync(join(root, PACKAGES[pkg], "package.json"), "utf8")) as { exports?: Record<string, unknown> };
  const sub = spec === pkg ? "." : `.${spec.slice(pkg.length)}`;
  const exportsMap = (manifest.exports ?? {}) as Record<string, { "deerflow-source"?: string } | string>;
  let target: string | undefined;
  const exact = exportsMap[sub];
  if (exact && typeof exact === "object") target = exact["deerflow-source"];
  else {
    // a subpath pattern such as "./*": its "*" stands for the rest of the specifier
    for (const [key, value] of Object.entries(exportsMap)) {
      const star = key.indexOf("*");
      if (star < 0 || typeof value !== "object" || !value["deerflow-source"]) continue;
      const [pre, post] = [key.slice(0, star), key.slice(star + 1)];
      if (sub.startsWith(pre) && sub.endsWith(post) && sub.length > pre.length + post.length) {
        target = value["deerflow-source"].replace("*", sub.slice(pre.length, sub.length - post.length));
        break;
      }
    }
  }
  return target ? join(root, PACKAGES[pkg], target) : "";
}

describe("the imports shown in the docs work", () => {
  // placeholders such as "<harness>/client" cannot be pasted either
  const imports = docImports().filter((i) => sourceOf(i.spec) !== undefined || i.spec.startsWith("<"));
  it("finds the package imports of the code examples", () => {
    expect(imports.length).toBeGreaterThanOrEqual(5);
  });
  it("every package import names an export of that entry point", { timeout: 120_000 }, async () => {
    const problems: string[] = [];
    for (const { where, names, spec } of imports) {
      const file = sourceOf(spec);
      if (file === undefined) {
        problems.push(`${where}: "${spec}" is a placeholder, not a package name`);
        continue;
      }
      if (!file) {
        problems.push(`${where}: "${spec}" is not an entry point of its package (package.json exports)`);
        continue;
      }
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      for (const n of names) if (!(n in mod)) problems.push(`${where}: "${spec}" has no export ${n}`);
    }
    expect(problems).toEqual([]);
  });
});
