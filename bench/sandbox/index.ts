/**
 * Per-command overhead of the sandbox tiers against a plain `sh -c 'echo hi'` spawn, and the
 * Docker tier's lifecycle: bubblewrap (3 warm-ups then 30 timed runs; as root also with staged
 * binds), then Docker (cold create, warm-pool acquire p50/p99 against the 300 ms target, re-acquire,
 * exec overhead, memory per idle container), skipped with a notice when no daemon answers.
 * Ends with one JSON line of the medians (see bench/README.md).
 */
import { median, percentile, printResultLine, round } from "../lib";
import { benchBwrap, RUNS, WARMUP } from "./bwrap";
import { benchDocker } from "./docker";

const WARM_TARGET_MS = 300;

function span(xs: number[]): string {
  return `median ${round(median(xs), 2)} ms (min ${round(Math.min(...xs), 2)}, max ${round(Math.max(...xs), 2)})`;
}

async function main(): Promise<void> {
  const bw = await benchBwrap();
  const plainMs = round(median(bw.plain), 2);
  const bwrapMs = round(median(bw.bwrap), 2);
  const overhead = round(bwrapMs - plainMs, 2);
  const stagedMs = bw.staged.length ? round(median(bw.staged), 2) : null;
  console.log(`runs: ${RUNS} (after ${WARMUP} warm-ups), uid drop: ${bw.uidDrop ? "yes" : "no"}, prlimit: ${bw.prlimit ? "yes" : "no"}`);
  console.log(`plain sh -c 'echo hi'   ${span(bw.plain)}`);
  console.log(`bwrap sandbox command   ${span(bw.bwrap)}`);
  console.log(`overhead ${overhead} ms (target ≤ 20 ms): ${overhead <= 20 ? "OK" : "OVER TARGET"}`);
  if (stagedMs !== null) console.log(`bwrap, staged binds     median ${stagedMs} ms (data dir under a 0700 parent; +${round(stagedMs - bwrapMs, 2)} ms vs direct binds)`);
  else console.log("bwrap, staged binds     not measured (only a root service stages binds)");

  const docker = await benchDocker((m) => console.log(`docker: ${m}`));
  const figures: Record<string, number | string | null> = { bwrap_ms: bwrapMs, plain_ms: plainMs, overhead_ms: overhead, bwrap_staged_ms: stagedMs };
  if ("skipped" in docker) {
    console.log(`docker: SKIPPED, no Docker daemon: ${docker.skipped}`);
    Object.assign(figures, { docker: "skipped", docker_cold_ms: null, docker_warm_p50_ms: null, docker_warm_p99_ms: null, docker_exec_ms: null, docker_exec_overhead_ms: null, docker_idle_mib: null });
  } else {
    const warmP50 = round(median(docker.warm), 2);
    const warmP99 = round(percentile(docker.warm, 99), 2);
    const execMs = round(median(docker.exec), 2);
    const execOverhead = round(execMs - median(docker.plain), 2);
    const idleMib = round(median(docker.memory) / 1024 / 1024, 2);
    console.log(`docker ${docker.version}, image ${docker.image}`);
    console.log(`docker cold create      ${span(docker.cold)} over ${docker.cold.length} new threads; first command after it ${span(docker.firstCommand)}`);
    console.log(`docker warm acquire     p50 ${warmP50} ms, p99 ${warmP99} ms over ${docker.warm.length} (pre-created container; target ≤ ${WARM_TARGET_MS} ms): ${warmP99 <= WARM_TARGET_MS ? "OK" : "OVER TARGET"}`);
    console.log(`docker re-acquire       ${span(docker.reacquire)} (idle thread, container still up)`);
    console.log(`docker exec command     ${span(docker.exec)}; overhead vs plain ${execOverhead} ms (bwrap: ${overhead} ms), back to back`);
    console.log(`docker exec after pause ${span(docker.execPaused)} (300 ms between commands, as between tool calls); ${docker.execWarm.warm} of ${docker.execWarm.total} commands ran in an exec started ahead`);
    console.log(`docker idle container   median ${idleMib} MiB (usage minus page cache, ${docker.memory.length} containers)`);
    console.log(`docker containers left after shutdown: ${docker.leftBehind}`);
    Object.assign(figures, {
      docker: docker.version,
      docker_cold_ms: round(median(docker.cold), 2),
      docker_warm_p50_ms: warmP50,
      docker_warm_p99_ms: warmP99,
      docker_reacquire_ms: round(median(docker.reacquire), 3),
      docker_exec_ms: execMs,
      docker_exec_overhead_ms: execOverhead,
      docker_exec_paused_ms: round(median(docker.execPaused), 2),
      docker_idle_mib: idleMib,
    });
    if (docker.leftBehind) process.exitCode = 1;
  }
  printResultLine(figures);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
