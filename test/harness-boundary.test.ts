import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const harnessSrc = join(root, "packages/harness/src");

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : /\.(ts|tsx|mts|js|mjs)$/.test(name) ? [p] : [];
  });
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module specifier a harness source file loads. */
function specifiers(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

function violates(file: string, spec: string): boolean {
  if (/^(@deerflow-ts\/(server|web)|deerflow-ts)(\/|$)/.test(spec)) return true;
  if (spec.startsWith(".")) {
    const target = resolve(join(file, ".."), spec);
    const rel = relative(join(root, "packages"), target);
    return /^(server|cli|web)(\/|$)/.test(rel);
  }
  return false;
}

describe("layering", () => {
  it("the harness never imports the app layer (server, cli, web)", () => {
    const offenders: string[] = [];
    for (const file of walk(harnessSrc)) {
      for (const spec of specifiers(file)) if (violates(file, spec)) offenders.push(`${relative(root, file)} → ${spec}`);
    }
    expect(offenders).toEqual([]);
  });

  it("the checker catches a violation (control)", () => {
    const fake = join(harnessSrc, "agents/x.ts");
    expect(violates(fake, "../../../server/src/app")).toBe(true);
    expect(violates(fake, "deerflow-ts")).toBe(true);
    expect(violates(fake, "../runtime")).toBe(false);
    expect(violates(fake, "hono")).toBe(false);
  });
});
