// grep and glob run a pattern the model chose over names and lines the agent wrote, on the host, in the
// gateway's process. A catastrophically backtracking pattern must cost one failed tool call, not freeze the
// gateway for every thread: the matching runs in a worker with a time budget.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalSandboxProvider, parseSandboxConfig, PATTERN_TIME_BUDGET_MS, threadDirs } from "../../src/sandbox";
import { SandboxError } from "../../src/errors";
import { tempBase } from "./helpers";

const base = tempBase("dfpattern-");
afterAll(() => base.cleanup());

describe("grep and glob patterns (host-side)", () => {
  const setup = async () => {
    const provider = new LocalSandboxProvider(parseSandboxConfig({ use: "local" }), { baseDir: base.dir });
    const sb = provider.get(await provider.acquire("redos"));
    const ws = threadDirs(base.dir, "redos").workspace;
    mkdirSync(ws, { recursive: true });
    writeFileSync(path.join(ws, "notes.txt"), `${"a".repeat(48)}\nfine line\n`);
    writeFileSync(path.join(ws, `${"a".repeat(200)}.txt`), "x");
    return { provider, sb: sb! };
  };

  it("a catastrophic grep regex fails within the budget while the event loop keeps running", async () => {
    const { provider, sb } = await setup();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    try {
      const err = await sb.grep("/mnt/user-data/workspace", "(a*)*b").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxError);
      expect((err as SandboxError).code).toBe("pattern_too_slow");
      expect((err as Error).message).toMatch(/\(a\*\)\*b.*simpler pattern/);
      // The gateway's event loop ran meanwhile (a blocked loop would not tick at all).
      expect(ticks).toBeGreaterThan(0);
      // A normal pattern still works right after.
      const ok = await sb.grep("/mnt/user-data/workspace", "fine");
      expect(ok.items.map((m) => m.text)).toEqual(["fine line"]);
    } finally {
      clearInterval(ticker);
      await provider.shutdown();
    }
  }, PATTERN_TIME_BUDGET_MS * 4);

  it("a glob that backtracks polynomially on long names fails the same way", async () => {
    const { provider, sb } = await setup();
    try {
      const err = await sb.glob("/mnt/user-data/workspace", `${"*a".repeat(12)}*b`).catch((e: unknown) => e);
      expect((err as SandboxError).code).toBe("pattern_too_slow");
      expect((await sb.glob("/mnt/user-data/workspace", "*.txt")).items).toContain("/mnt/user-data/workspace/notes.txt");
    } finally {
      await provider.shutdown();
    }
  }, PATTERN_TIME_BUDGET_MS * 4);
});
