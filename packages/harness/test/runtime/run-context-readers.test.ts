import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(__dirname, "../../src");
// Wire names whose typed fields are `context.identity` / `context.settings`: reading them from the bag again
// would bring back the untyped path (a missing key silently becoming "default" or undefined).
const DOT_READ = /\bcontext\??\.(agent_name|user_id|thread_id|run_id|disable_clarification)\b/;
const INDEX_READ = /\bcontext\??\[\s*["'](agent_name|user_id|thread_id|run_id|disable_clarification|secrets)["']\s*\]/;
const STRINGS = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g;
// `contextUserId` is the sandbox's helper for plain `{user_id}` records, not a run-context reader.
const ALLOWED = new Set(["sandbox/ids.ts"]);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("run-context readers", () => {
  it("no source file reads identity or settings from the context bag by their wire names", () => {
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      const rel = path.relative(SRC, file);
      if (ALLOWED.has(rel)) continue;
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          const code = line.trim();
          if (code.startsWith("*") || code.startsWith("//") || code.startsWith("/*")) return;
          // messages may name the wire keys; code may not read them
          if (DOT_READ.test(code.replace(STRINGS, '""')) || INDEX_READ.test(code)) offenders.push(`${rel}:${i + 1}: ${code}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
