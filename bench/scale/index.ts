/**
 * Scale-out benchmark: SCALE_RUNS (400) concurrent streaming runs, each two
 * calls of a scripted OpenAI-compatible model answering after
 * SCALE_MODEL_DELAY_MS (100) ms with a tool call in between, against
 * `deerflow serve` processes started the way a user starts them:
 *
 * - baseline: one process on SQLite with the in-memory stream bridge;
 * - 1, 2 and 4 processes (SCALE_PROCESSES) on PostgreSQL + Redis, started
 *   here with startPostgres()/startRedis(), runs spread round-robin by the
 *   client (no proxy).
 *
 * Per deployment: wall time of the burst, time to first event p50/p99,
 * cancel latency p50/p99 (SCALE_CANCELS hanging runs, each cancelled through
 * another process than the one executing it, timed until the client reading
 * from the executing process got `end`), server CPU per run (user + system of
 * every serve process during the burst; PostgreSQL's and Redis's own CPU not
 * included), and the database growth over one 60-turn thread (baseline and
 * one-process PostgreSQL only: it does not depend on the process count).
 * Ratios are printed beside the baseline. The machine's core count bounds the
 * speed-up: every process, PostgreSQL, Redis, the model double and the client
 * share them. Last line: one JSON object.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freshPostgresDatabase, startPostgres, startRedis, startScriptedLLMServer } from "../../packages/harness/src/testing";
import { envInt, heading, printResultLine, report, round } from "../lib";
import type { ResultFigures } from "../lib";
import { scriptedRouter } from "../../packages/server/test/scale-out/helpers/scripted-router";
import { Deployment, p } from "./deployment";
import type { DeploymentFigures, DeploymentSpec } from "./deployment";

const RUNS = envInt("SCALE_RUNS", 400);
const DELAY = envInt("SCALE_MODEL_DELAY_MS", 100);
const CANCELS = envInt("SCALE_CANCELS", 20);
const TURNS = envInt("SCALE_TURNS", 60);
const PROCESSES = (process.env.SCALE_PROCESSES ?? "1,2,4")
  .split(",")
  .map((x) => Number(x.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);

async function measure(spec: DeploymentSpec, storage: boolean): Promise<DeploymentFigures> {
  const t = performance.now();
  const d = await Deployment.start(spec);
  try {
    // warm-up: each process compiles and opens its pools once before the timed burst
    const step = (what: string, t0: number) => report(`${spec.label}: ${what}`, `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    step("start", t);
    let t0 = performance.now();
    await d.burst(Math.min(RUNS, 10 * spec.processes), DELAY);
    step("warm-up", t0);
    t0 = performance.now();
    const burst = await d.burst(RUNS, DELAY);
    step("burst (threads created first)", t0);
    t0 = performance.now();
    const cancels = await d.cancels(CANCELS);
    step("cancels", t0);
    t0 = performance.now();
    const bytes = storage ? await d.storagePerThread(TURNS) : Number.NaN;
    if (storage) step(`${TURNS}-turn thread`, t0);
    const f: DeploymentFigures = {
      label: spec.label,
      processes: spec.processes,
      runs: RUNS,
      wall_ms: burst.wall,
      ttfe_p50_ms: p(burst.ttfe, 50),
      ttfe_p99_ms: p(burst.ttfe, 99),
      cancel_p50_ms: p(cancels, 50),
      cancel_p99_ms: p(cancels, 99),
      cpu_ms_per_run: burst.cpuPerRun,
      storage_bytes_60_turns: bytes,
    };
    report(`${spec.label}: phase time`, `${((performance.now() - t) / 1000).toFixed(1)} s`);
    return f;
  } finally {
    await d.stop();
  }
}

function ratio(x: number, base: number): string {
  return Number.isFinite(x) && Number.isFinite(base) && base > 0 ? `${(x / base).toFixed(2)}×` : "–";
}

async function main(): Promise<void> {
  const started = performance.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-bench-scale-"));
  const router = scriptedRouter();
  const llm = await startScriptedLLMServer({ script: [router.step], onExhausted: "repeat-last" });
  const [pgServer, redis] = await Promise.all([startPostgres(), startRedis()]);
  const results: DeploymentFigures[] = [];
  try {
    heading(`scale: ${RUNS} concurrent runs × 2 model calls of ${DELAY} ms, ${os.cpus().length} cores`);
    const base = await measure({ label: "sqlite-1", processes: 1, llmUrl: `${llm.url}/v1`, root }, true);
    results.push(base);
    for (const n of PROCESSES) {
      const db = await freshPostgresDatabase(pgServer.url, `scale${n}`);
      try {
        results.push(await measure({ label: `pg-redis-${n}`, processes: n, llmUrl: `${llm.url}/v1`, root, postgresUrl: db.url, redisUrl: redis.url }, n === PROCESSES[0]));
      } finally {
        await db.drop();
      }
    }
    heading("results (ratio to the SQLite single process in brackets)");
    const modelBound = 2 * DELAY;
    report("model-bound time of one run", `${modelBound} ms`);
    for (const r of results) {
      report(`${r.label}: wall`, `${r.wall_ms.toFixed(0)} ms (${ratio(r.wall_ms, base.wall_ms)})`);
      report(`${r.label}: time to first event p50 / p99`, `${r.ttfe_p50_ms.toFixed(1)} / ${r.ttfe_p99_ms.toFixed(1)} ms (p99 ${ratio(r.ttfe_p99_ms, base.ttfe_p99_ms)})`);
      report(`${r.label}: cancel p50 / p99`, `${r.cancel_p50_ms.toFixed(1)} / ${r.cancel_p99_ms.toFixed(1)} ms (p99 ${ratio(r.cancel_p99_ms, base.cancel_p99_ms)})`);
      report(`${r.label}: server CPU per run`, `${r.cpu_ms_per_run.toFixed(2)} ms (${ratio(r.cpu_ms_per_run, base.cpu_ms_per_run)})`);
      if (Number.isFinite(r.storage_bytes_60_turns)) {
        report(`${r.label}: storage of a ${TURNS}-turn thread`, `${(r.storage_bytes_60_turns / 1024).toFixed(1)} KB (${ratio(r.storage_bytes_60_turns, base.storage_bytes_60_turns)})`);
      }
    }
    report("bench time", `${((performance.now() - started) / 1000).toFixed(1)} s`);
    const figures: ResultFigures = { runs: RUNS, model_delay_ms: DELAY, cores: os.cpus().length };
    for (const r of results) {
      const k = r.label.replace(/-/g, "_");
      figures[`${k}_wall_ms`] = round(r.wall_ms, 1);
      figures[`${k}_ttfe_p99_ms`] = round(r.ttfe_p99_ms, 1);
      figures[`${k}_cancel_p99_ms`] = round(r.cancel_p99_ms, 1);
      figures[`${k}_cpu_ms_per_run`] = round(r.cpu_ms_per_run, 2);
      if (Number.isFinite(r.storage_bytes_60_turns)) figures[`${k}_storage_bytes_60_turns`] = r.storage_bytes_60_turns;
      if (r !== base) figures[`${k}_wall_ratio`] = round(r.wall_ms / base.wall_ms, 3);
    }
    printResultLine(figures);
  } finally {
    await llm.close();
    await Promise.all([pgServer.stop(), redis.stop()]);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

await main();
