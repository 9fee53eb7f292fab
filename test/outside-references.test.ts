import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");

/** Every file the docs and the shipped sources are made of (tests may read shared fixtures by path; they are not scanned). */
function files(): string[] {
  const out: string[] = [join(root, "README.md"), join(root, "config.example.yaml")];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(md|ts|tsx|yaml)$/.test(name)) out.push(p);
    }
  };
  walk(join(root, "docs"));
  for (const pkg of readdirSync(join(root, "packages"))) walk(join(root, "packages", pkg, "src"));
  return out;
}

// Pointers into notes that live outside this repository (a reader of the repo cannot follow them).
const OUTSIDE = [/\binventory §/i, /deerflow-api(\.md)?\b/, /deerflow-inventory/, /\bseed \d\b/, /shared\/(reference|fixtures|STACK|ARCHITECTURE)/];
// A bare section sign points at such a note too, unless the line cites a public standard (RFC 6749 §5.1, OpenID Connect Core §3.1.2.1).
const STANDARD = /\bRFC \d+|\bCore §\d/;

describe("docs and sources say things in the repository's own terms", () => {
  it("point at no file or section outside the repository", () => {
    const hits: string[] = [];
    for (const file of files()) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((line, i) => {
        const where = `${relative(root, file)}:${i + 1}: ${line.trim().slice(0, 120)}`;
        if (OUTSIDE.some((re) => re.test(line))) hits.push(where);
        else if (line.includes("§") && !STANDARD.test(line)) hits.push(where);
      });
    }
    expect(hits).toEqual([]);
  });
});
