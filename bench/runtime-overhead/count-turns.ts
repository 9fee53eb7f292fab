/**
 * A fixed number of turns of the bench's agent (8 no-op middlewares, SQLite)
 * after a warm-up, for figures that do not depend on what else the machine
 * runs: instruction counts under `valgrind --tool=callgrind` (worker threads
 * included), system calls under `strace -c`, the heap allocated per turn.
 * bench/README.md has the commands.
 *
 * `count-turns [turns=200] [warmup=50] [middlewares=8]`: prints wall-clock and
 * CPU time per turn and the heap growth per turn. `KEEP_DIR=1` keeps the
 * database (its path is printed).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildOurAgent, ourTurn } from "./ours";

/**
 * With `COUNT_PAUSE` set: say `label` on stdout and wait for a line on stdin, so a profiler started with
 * collection off (`valgrind --tool=callgrind --instr-atstart=no`) can be switched on for the timed turns only.
 */
async function pausePoint(label: string): Promise<void> {
  if (!process.env.COUNT_PAUSE) return;
  process.stdout.write(`${label}\n`);
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  process.stdin.pause();
}

async function main(): Promise<void> {
  const turns = Number(process.argv[2] ?? 200);
  const warmup = Number(process.argv[3] ?? 50);
  const middlewares = Number(process.argv[4] ?? 8);
  const dir = mkdtempSync(path.join(tmpdir(), "count-turns-"));
  try {
    const ours = buildOurAgent(path.join(dir, "ours.sqlite"), middlewares);
    for (let i = 0; i < warmup; i++) await ourTurn(ours.agent, `warm-${i}`, "go");
    await pausePoint("warm");
    // With a young generation big enough that no collection runs during the timed turns (`--max-semi-space-size`),
    // the heap's growth over them is what one turn allocates.
    const heap0 = process.memoryUsage().heapUsed;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < turns; i++) await ourTurn(ours.agent, `fresh-${i}`, "go");
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    const heapPerTurn = (process.memoryUsage().heapUsed - heap0) / Math.max(turns, 1);
    await pausePoint("done");
    await ours.store.close();
    const per = (v: number) => (turns ? (v / turns).toFixed(4) : "-");
    process.stdout.write(`turns ${turns} warmup ${warmup} middlewares ${middlewares} wall/turn ${per(wall)} ms cpu/turn ${per((c.user + c.system) / 1000)} ms (user ${per(c.user / 1000)}, system ${per(c.system / 1000)}) heap growth/turn ${Math.round(heapPerTurn)} B\n`);
  } finally {
    if (process.env.KEEP_DIR) process.stdout.write(`database kept in ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`count-turns failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
