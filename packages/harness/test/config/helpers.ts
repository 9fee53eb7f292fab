import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

/** DeerFlow's fixtures: `<repo>/../shared/fixtures/deerflow`. */
export const FIXTURES = path.resolve(here, "../../../../../shared/fixtures/deerflow");
/** Whether DeerFlow's fixtures sit next to this checkout (CI: always; `.ci/run` fails otherwise). */
export const HAS_FIXTURES = existsSync(FIXTURES);
if (!HAS_FIXTURES) console.warn(`[config tests] SKIPPING tests of DeerFlow's example files: ${FIXTURES} is absent`);

/** A temp directory with helpers to write files into it. */
export function tempDir() {
  const dir = mkdtempSync(path.join(tmpdir(), "df-config-"));
  return {
    dir,
    write(rel: string, text: string) {
      const p = path.join(dir, rel);
      mkdirSync(path.dirname(p), { recursive: true });
      writeFileSync(p, text);
      return p;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Collects logger output. */
export function memoryLogger() {
  const lines: string[] = [];
  return { lines, warn: (m: string) => lines.push(m) };
}
