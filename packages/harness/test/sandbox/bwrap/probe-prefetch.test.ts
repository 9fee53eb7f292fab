/**
 * The start-up bwrap check runs without blocking the event loop and leaves its result where the
 * provider factory finds it; on success one sandbox is started, not two.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseSandboxConfig, prefetchSandboxProvider, probeBwrapDataDir, sandboxRunAs } from "../../../src/sandbox";
import { bwrapAvailable } from "../helpers";

describe.skipIf(!bwrapAvailable())("prefetchSandboxProvider", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "dfsbx-prefetch-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("keeps the event loop free while bwrap starts, then the probe answers from its cache", async () => {
    const baseDir = path.join(root, "data");
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    await prefetchSandboxProvider({}, { baseDir });
    clearInterval(timer);
    // the sandbox start awaited a child process: timers ran meanwhile (a spawnSync would allow none)
    expect(ticks).toBeGreaterThan(0);
    expect(readdirSync(baseDir).filter((n) => n.startsWith(".sandbox-probe-"))).toEqual([]);
    const probe = probeBwrapDataDir({ baseDir, runAs: sandboxRunAs(parseSandboxConfig({})) });
    expect(probe.ok).toBe(true);
    expect(probe.baseDir).toBe(path.resolve(baseDir));
    // answered from the cache: no scratch directory was made again
    expect(readdirSync(baseDir)).toEqual([]);
  });

  it("does nothing for a config that does not use bwrap, and never rejects on a bad one", async () => {
    const baseDir = path.join(root, "local");
    await prefetchSandboxProvider({ use: "local" }, { baseDir });
    await expect(prefetchSandboxProvider({ use: 42 }, { baseDir })).resolves.toBeUndefined();
    expect(() => readdirSync(baseDir)).toThrow();
  });
});
