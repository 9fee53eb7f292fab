/**
 * Per-command overhead of the bubblewrap sandbox vs a plain `sh -c 'echo hi'`
 * spawn: 3 warm-ups then 30 timed runs each; prints the medians and ends
 * with one JSON line `{"bwrap_ms":…,"plain_ms":…,"overhead_ms":…,"bwrap_staged_ms":…}`.
 * As root it also times a data dir under a 0700 parent, whose binds are staged
 * in a private mount namespace (`bwrap_staged_ms`, null otherwise).
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { BwrapSandboxProvider, parseSandboxConfig } from "../../packages/harness/src/sandbox";
import type { Sandbox } from "../../packages/harness/src/sandbox";

const RUNS = 30;
const WARMUP = 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function plainOnce(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const c = spawn("sh", ["-c", "echo hi"], { stdio: ["ignore", "pipe", "pipe"] });
    c.stdout.resume();
    c.on("error", reject);
    c.on("close", () => resolve(performance.now() - t));
  });
}

async function bwrapOnce(sb: Sandbox): Promise<number> {
  const t = performance.now();
  const r = await sb.executeCommand("echo hi");
  if (r.stdout.trim() !== "hi") throw new Error(`unexpected output: ${r.stdout} ${r.stderr}`);
  return performance.now() - t;
}

async function main(): Promise<void> {
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
      await bwrapOnce(sb);
      if (ssb) await bwrapOnce(ssb);
    }
    const plain: number[] = [];
    const bw: number[] = [];
    const st: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      plain.push(await plainOnce());
      bw.push(await bwrapOnce(sb));
      if (ssb) st.push(await bwrapOnce(ssb));
    }
    const stagedMs = st.length ? Number(median(st).toFixed(2)) : null;
    const plainMs = Number(median(plain).toFixed(2));
    const bwrapMs = Number(median(bw).toFixed(2));
    const overhead = Number((bwrapMs - plainMs).toFixed(2));
    console.log(`runs: ${RUNS} (after ${WARMUP} warm-ups), uid drop: ${provider.probe.setprivPath && process.getuid?.() === 0 ? "yes" : "no"}, prlimit: ${provider.probe.prlimitPath ? "yes" : "no"}`);
    console.log(`plain sh -c 'echo hi'   median ${plainMs} ms (min ${Math.min(...plain).toFixed(2)}, max ${Math.max(...plain).toFixed(2)})`);
    console.log(`bwrap sandbox command   median ${bwrapMs} ms (min ${Math.min(...bw).toFixed(2)}, max ${Math.max(...bw).toFixed(2)})`);
    console.log(`overhead ${overhead} ms (target ≤ 20 ms): ${overhead <= 20 ? "OK" : "OVER TARGET"}`);
    if (stagedMs !== null) console.log(`bwrap, staged binds     median ${stagedMs} ms (data dir under a 0700 parent; +${(stagedMs - bwrapMs).toFixed(2)} ms vs direct binds)`);
    else console.log("bwrap, staged binds     not measured (only a root service stages binds)");
    console.log(JSON.stringify({ bwrap_ms: bwrapMs, plain_ms: plainMs, overhead_ms: overhead, bwrap_staged_ms: stagedMs }));
  } finally {
    await provider.shutdown();
    await staged.shutdown();
    rmSync(base, { recursive: true, force: true });
    rmSync(closed, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
