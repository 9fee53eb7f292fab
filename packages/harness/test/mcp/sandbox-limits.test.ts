// A sandboxed MCP server session runs in its own cgroup with the bash sandbox's limits: a session driven by one
// thread's agent (a code-running server, a compromised package) cannot fork-flood the host or the other threads.
// Real bubblewrap, real cgroups; the flood is bounded (at most 96 `sleep` children, killed right after).
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/sandbox";
import { bwrapUsable, call, FIXTURES, makePool, SANDBOX_RUN_AS, toolRuntime } from "./_helpers";
import type { PoolHarness } from "./_helpers";

const HAS_BWRAP = bwrapUsable();
const CG = HAS_BWRAP ? detectCgroups() : undefined;
const HAS_PIDS_CGROUP = Boolean(CG?.parents.pids);
if (HAS_BWRAP && !HAS_PIDS_CGROUP) console.warn(`[mcp limits test] SKIPPING: no writable pids cgroup (${CG?.notes.join("; ")})`);

describe.skipIf(!HAS_PIDS_CGROUP)("sandboxed MCP server limits (real bubblewrap and cgroups)", () => {
  const harnesses: PoolHarness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.cleanup();
  });

  it("a session's processes are capped by its own pids cgroup, and the server keeps answering", async () => {
    const probe = { type: "stdio", command: process.execPath, args: [path.join(FIXTURES, "probe-server.mjs")] };
    const h = makePool({ probe }, { launch: { cgroup: () => ({ support: CG!, limits: { pidsMax: 48, memoryBytes: 0, cpuCores: 0 } }) } });
    harnesses.push(h);
    const tools = await h.pool.getTools();
    const r = await call(tools, "probe_inspect", { spawn: 96 }, toolRuntime("flood", "u1"));
    const report = JSON.parse(String(r.content)) as { spawned: { started: number; failed: number } };
    // node's own threads count too: well under 48 children start, the rest fail with EAGAIN.
    expect(report.spawned.started).toBeLessThan(48);
    expect(report.spawned.failed).toBeGreaterThan(0);
    const again = JSON.parse(String((await call(tools, "probe_inspect", {}, toolRuntime("flood", "u1"))).content)) as { uid: number };
    if (SANDBOX_RUN_AS) expect(again.uid).toBe(SANDBOX_RUN_AS.uid);
  }, 60_000);
});
