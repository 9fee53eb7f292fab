/**
 * The run subsystem stays in files small enough to read whole: each concern
 * (the service's bookkeeping, executing a run, the cross-process steps, the
 * backends) has its own file, and none grows past the repository's limit.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const RUNS = path.resolve(__dirname, "../../src/runs");
const LIMIT = 500;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

describe("runs/ file sizes", () => {
  it(`keeps every source file of src/runs at most ${LIMIT} lines`, () => {
    const files = sourceFiles(RUNS);
    expect(files.map((f) => path.basename(f))).toContain("run-service.ts");
    const over = files
      .map((f) => ({ file: path.relative(RUNS, f), lines: readFileSync(f, "utf8").split("\n").length }))
      .filter((f) => f.lines > LIMIT);
    expect(over).toEqual([]);
  });
});
