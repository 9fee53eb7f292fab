/**
 * Scale-out benchmark: SCALE_RUNS (400) concurrent streaming runs, each two
 * calls of a scripted OpenAI-compatible model answering after
 * SCALE_MODEL_DELAY_MS (100) ms with a tool call in between, against
 * `deerflow serve` processes on the config a user writes for it:
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
 *
 * The bench's own time: processes start from one prebuilt bundle of the CLI
 * (serve-entry.ts; SCALE_ENTRY=tsx starts them from the CLI's bin, as a
 * user does). PostgreSQL and Redis start once, while the baseline's process
 * starts; each phase gets a fresh database. What is not timed overlaps: the
 * burst's threads are created during the warm-up, and the next phase starts
 * during the 60-turn thread (a size) and the stop. The timed burst and
 * cancels run alone. Every step is timed, and the breakdown is printed
 * before the results.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freshPostgresDatabase, startPostgres, startRedis, startScriptedLLMServer } from "../../packages/harness/src/testing";
import type { FreshDatabase } from "../../packages/harness/src/testing";
import { envInt, heading, printResultLine, report, round } from "../lib";
import type { ResultFigures } from "../lib";
import { scriptedRouter } from "../../packages/server/test/scale-out/helpers/scripted-router";
import { Deployment, p } from "./deployment";
import type { DeploymentFigures, DeploymentSpec } from "./deployment";
import { serveEntry } from "./serve-entry";
import type { ServeEntry } from "./serve-entry";
import { Timeline } from "./timeline";

const RUNS = envInt("SCALE_RUNS", 400);
const DELAY = envInt("SCALE_MODEL_DELAY_MS", 100);
const CANCELS = envInt("SCALE_CANCELS", 20);
const TURNS = envInt("SCALE_TURNS", 60);
const PROCESSES = (process.env.SCALE_PROCESSES ?? "1,2,4")
  .split(",")
  .map((x) => Number(x.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);

/** A started phase: its processes and, on PostgreSQL, its own database. */
interface Live {
  d: Deployment;
  db?: FreshDatabase;
  storage: boolean;
}

/** Phases started and not yet stopped (stopped by `main`'s `finally` when something failed). */
const LIVE = new Set<Live>();

/** Create the phase's database (PostgreSQL), start its processes; drop the database if they fail to start. */
async function startPhase(tl: Timeline, entry: ServeEntry, spec: DeploymentSpec, storage: boolean, pgUrl?: string): Promise<Live> {
  const t0 = performance.now();
  const db = pgUrl ? await freshPostgresDatabase(pgUrl, `scale${spec.processes}`) : undefined;
  let d: Deployment;
  try {
    d = await Deployment.start(db ? { ...spec, postgresUrl: db.url } : spec, entry);
  } catch (err) {
    await db?.drop();
    throw err;
  }
  const live: Live = { d, db, storage };
  LIVE.add(live);
  tl.add(spec.label, START_STEP, performance.now() - t0);
  return live;
}

const START_STEP = "start processes";
const THREADS_STEP = `${RUNS} threads for the burst (during the warm-up)`;

async function stopPhase(tl: Timeline, live: Live): Promise<void> {
  LIVE.delete(live);
  await tl.time(live.d.spec.label, "stop", async () => {
    await live.d.stop();
    await Promise.all([live.db?.drop(), live.d.remove()]);
  });
}

/**
 * The phase's figures. Only the burst and the cancels are timed, so nothing
 * else runs meanwhile; what is not timed overlaps: the burst's threads are
 * created during the warm-up, and `startNext` (the next phase's start) is
 * called before the 60-turn thread, whose figure is bytes, not time.
 */
async function measure(tl: Timeline, { d, storage }: Live, startNext: () => void): Promise<DeploymentFigures> {
  const { spec } = d;
  const [threads] = await Promise.all([
    tl.time(spec.label, THREADS_STEP, () => d.createThreads(RUNS)),
    // warm-up: each process compiles and opens its pools once before the timed burst
    tl.time(spec.label, "warm-up", async () => d.burst(await d.createThreads(Math.min(RUNS, 10 * spec.processes)), DELAY)),
  ]);
  const burst = await d.burst(threads, DELAY);
  tl.add(spec.label, "burst", burst.wall);
  const cancels = await tl.time(spec.label, "cancels", () => d.cancels(CANCELS));
  startNext();
  const bytes = storage ? await tl.time(spec.label, `${TURNS}-turn thread`, () => d.storagePerThread(TURNS)) : Number.NaN;
  return {
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
}

function ratio(x: number, base: number): string {
  return Number.isFinite(x) && Number.isFinite(base) && base > 0 ? `${(x / base).toFixed(2)}×` : "–";
}

async function main(): Promise<void> {
  const tl = new Timeline();
  heading(`scale: ${RUNS} concurrent runs × 2 model calls of ${DELAY} ms, ${os.cpus().length} cores, load average ${loadAverage()}`);
  // performance.now() counts from this process's start: tsx compiling the bench and what it imports
  tl.add("setup", "bench loaded", performance.now());
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-bench-scale-"));
  const router = scriptedRouter();
  const results: DeploymentFigures[] = [];
  // what may still be starting or running when something fails, awaited and stopped in `finally`
  const pending: Promise<unknown>[] = [];
  const services: { stop(): Promise<void> }[] = [];
  let entry: ServeEntry | undefined;
  try {
    const llm = await tl.time("setup", "scripted model", () => startScriptedLLMServer({ script: [router.step], onExhausted: "repeat-last" }));
    services.push({ stop: () => llm.close() });
    const llmUrl = `${llm.url}/v1`;
    const e = await tl.time("setup", `serve entry (${process.env.SCALE_ENTRY ?? "bundle"})`, () => serveEntry());
    entry = e;
    const specs: { spec: DeploymentSpec; storage: boolean }[] = [
      { spec: { label: "sqlite-1", processes: 1, llmUrl, root }, storage: true },
      ...PROCESSES.map((n, i) => ({ spec: { label: `pg-redis-${n}`, processes: n, llmUrl, root }, storage: i === 0 })),
    ];
    // The baseline's process boots while PostgreSQL's initdb (synchronous: it blocks this loop) and Redis start.
    const services0 = performance.now();
    const baseStarting = startPhase(tl, e, specs[0]!.spec, true);
    pending.push(baseStarting);
    baseStarting.catch(() => undefined); // awaited below, after the services
    const pgServer = await tl.time("setup", "PostgreSQL (initdb, start)", () => startPostgres());
    services.push(pgServer);
    const redis = await tl.time("setup", "Redis", () => startRedis());
    services.push(redis);
    for (const s of specs.slice(1)) s.spec.redisUrl = redis.url;
    let current: Live | undefined = await baseStarting;
    tl.add("setup", "PostgreSQL + Redis + baseline start (together)", performance.now() - services0);

    for (let i = 0; current; i++) {
      // the next phase's processes start during this one's 60-turn thread and stop: none of them is timed
      const next = specs[i + 1];
      let starting: Promise<Live | undefined> = Promise.resolve(undefined);
      const startNext = () => {
        if (!next) return;
        starting = startPhase(tl, e, next.spec, next.storage, pgServer.url);
        starting.catch(() => undefined); // awaited below
        pending.push(starting);
      };
      results.push(await measure(tl, current, startNext));
      const stopping = stopPhase(tl, current);
      pending.push(stopping);
      await stopping;
      current = await starting;
    }
  } finally {
    const t0 = performance.now();
    await Promise.allSettled(pending);
    for (const l of [...LIVE]) await stopPhase(tl, l).catch(() => undefined);
    // PostgreSQL's stop deletes its cluster synchronously; the bench's own files go meanwhile, off the loop
    const removing = fs.promises.rm(root, { recursive: true, force: true });
    await Promise.allSettled(services.reverse().map((s) => s.stop()));
    entry?.close();
    await removing;
    tl.add("teardown", "stop PostgreSQL, Redis, model; delete files", performance.now() - t0);
  }
  printResults(tl, results, entry!.kind);
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");
}

function printResults(tl: Timeline, results: DeploymentFigures[], entryKind: string): void {
  const base = results[0]!;
  heading("where the bench's time went (a phase's 60-turn thread and stop overlap the next one's start; its threads, its warm-up)");
  tl.print();
  report("serve processes' start (sum over phases)", `${(tl.totalOf(START_STEP) / 1000).toFixed(1)} s`);
  report("timed work (bursts and cancels, sum over phases)", `${((tl.totalOf("burst") + tl.totalOf("cancels")) / 1000).toFixed(1)} s`);
  heading("results (ratio to the SQLite single process in brackets)");
  report("model-bound time of one run", `${2 * DELAY} ms`);
  for (const r of results) {
    report(`${r.label}: wall`, `${r.wall_ms.toFixed(0)} ms (${ratio(r.wall_ms, base.wall_ms)})`);
    report(`${r.label}: time to first event p50 / p99`, `${r.ttfe_p50_ms.toFixed(1)} / ${r.ttfe_p99_ms.toFixed(1)} ms (p99 ${ratio(r.ttfe_p99_ms, base.ttfe_p99_ms)})`);
    report(`${r.label}: cancel p50 / p99`, `${r.cancel_p50_ms.toFixed(1)} / ${r.cancel_p99_ms.toFixed(1)} ms (p99 ${ratio(r.cancel_p99_ms, base.cancel_p99_ms)})`);
    report(`${r.label}: server CPU per run`, `${r.cpu_ms_per_run.toFixed(2)} ms (${ratio(r.cpu_ms_per_run, base.cpu_ms_per_run)})`);
    if (Number.isFinite(r.storage_bytes_60_turns)) {
      report(`${r.label}: storage of a ${TURNS}-turn thread`, `${(r.storage_bytes_60_turns / 1024).toFixed(1)} KB (${ratio(r.storage_bytes_60_turns, base.storage_bytes_60_turns)})`);
    }
  }
  const benchS = performance.now() / 1000;
  report("bench time (this process, start to end)", `${benchS.toFixed(1)} s (load average ${loadAverage()})`);
  const figures: ResultFigures = { runs: RUNS, model_delay_ms: DELAY, cores: os.cpus().length, serve_entry: entryKind };
  for (const r of results) {
    const k = r.label.replace(/-/g, "_");
    figures[`${k}_wall_ms`] = round(r.wall_ms, 1);
    figures[`${k}_ttfe_p99_ms`] = round(r.ttfe_p99_ms, 1);
    figures[`${k}_cancel_p99_ms`] = round(r.cancel_p99_ms, 1);
    figures[`${k}_cpu_ms_per_run`] = round(r.cpu_ms_per_run, 2);
    if (Number.isFinite(r.storage_bytes_60_turns)) figures[`${k}_storage_bytes_60_turns`] = r.storage_bytes_60_turns;
    if (r !== base) figures[`${k}_wall_ratio`] = round(r.wall_ms / base.wall_ms, 3);
  }
  figures.bench_time_s = round(benchS, 1);
  figures.serve_start_s = round(tl.totalOf(START_STEP) / 1000, 1);
  printResultLine(figures);
}

await main();
