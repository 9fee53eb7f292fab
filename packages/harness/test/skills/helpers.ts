import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh temp dir for one test file. */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `dfskills-${prefix}-`));
}

/** Write a SKILL.md with the given frontmatter lines and body. */
export function writeSkill(dir: string, frontmatter: string, body = "# Instructions\n\nDo the thing.\n", extra: Record<string, string> = {}): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "SKILL.md"), `---\n${frontmatter}\n---\n${body}`);
  for (const [rel, content] of Object.entries(extra)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}
