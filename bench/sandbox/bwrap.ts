/**
 * The bubblewrap tier against a plain `sh -c 'echo hi'` spawn: 3 warm-ups then 30 timed runs
 * each. As root it also times a data dir under a 0700 parent, whose binds are staged in a
 * private mount namespace (`bwrap_staged_ms`, null otherwise).
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { median } from "../lib";
import { BwrapSandboxProvider, parseSandboxConfig } from "../../packages/harness/src/sandbox";
import type { Sandbox } from "../../packages/harness/src/sandbox";

export const RUNS = 30;
export const WARMUP = 3;

/** One `sh -c 'echo hi'` spawned directly; its wall time in ms. */
export function plainOnce(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const c = spawn("sh", ["-c", "echo hi"], { stdio: ["ignore", "pipe", "pipe"] });
    c.stdout.resume();
    c.on("error", reject);
    c.on("close", () => resolve(performance.now() - t));
  });
}

/** One `echo hi` through a sandbox; its wall time in ms (throws on wrong output). */
export async function sandboxOnce(sb: Sandbox): Promise<number> {
  const t = performance.now();
  const r = await sb.executeCommand("echo hi");
  if (r.stdout.trim() !== "hi") throw new Error(`unexpected output: ${r.stdout} ${r.stderr}`);
  return performance.now() - t;
}

/** Figures of the bubblewrap part. */
export interface BwrapFigures {
  plain: number[];
  bwrap: number[];
  staged: number[];
  uidDrop: boolean;
  prlimit: boolean;
}

/** Time plain spawns and bwrap commands (interleaved, so machine load hits both alike). */
export async function benchBwrap(): Promise<BwrapFigures> {
  const base = mkdtempSync(path.join(os.tmpdir(), "dfbench-"));
  chmodSync(base, 0o711);
  const provider = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: base });
  // mkdtemp's 0700 parent: closed to the sandbox uid, so (as root) every bind is staged.
  const closed = mkdtempSync(path.join(os.tmpdir(), "dfbench-closed-"));
  const staged = new BwrapSandboxProvider(parseSandboxConfig({ use: "bwrap" }), { baseDir: path.join(closed, "data") });
  try {
    const sb = provider.get(await provider.acquire("bench"))!;
    const ssb = staged.stage ? staged.get(await staged.acquire("bench"))! : undefined;
    for (let i = 0; i < WARMUP; i++) {
      await plainOnce();
      await sandboxOnce(sb);
      if (ssb) await sandboxOnce(ssb);
    }
    const out: BwrapFigures = { plain: [], bwrap: [], staged: [], uidDrop: !!provider.probe.setprivPath && process.getuid?.() === 0, prlimit: !!provider.probe.prlimitPath };
    for (let i = 0; i < RUNS; i++) {
      out.plain.push(await plainOnce());
      out.bwrap.push(await sandboxOnce(sb));
      if (ssb) out.staged.push(await sandboxOnce(ssb));
    }
    return out;
  } finally {
    await provider.shutdown();
    await staged.shutdown();
    rmSync(base, { recursive: true, force: true });
    rmSync(closed, { recursive: true, force: true });
  }
}

export { median };
