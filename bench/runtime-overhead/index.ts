/**
 * bench:runtime — per-turn runtime overhead of our agent loop vs LangChain JS
 * v1 `createAgent` (LangGraph), growth over a 200-turn thread, checkpoint
 * storage vs raw message bytes, and (when available) DeerFlow's lead chain.
 *
 * Human-readable lines first; the LAST line is one JSON object.
 * Environment overrides: see bench/README.md.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { envInt, flagOrEnv, heading, printResultLine, report, round } from "../lib";
import type { ResultFigures } from "../lib";
import { buildLeadAgent, leadTurn } from "./lead";
import { buildReferenceAgent, referenceStoredBytes, referenceTurn } from "./langgraph";
import { freshThreadTurns, medianSeries, sameThreadSeries, windowMean, windowMedian } from "./measure";
import { buildOurAgent, ourTurn } from "./ours";

/** LangGraph's time per turn ÷ ours, for the bare loop, 8 no-op middlewares and the lead chain alike. */
const TARGET_RATIO = 100;
/** Our mean wall-clock time per turn (ms), for the same three. */
const TARGET_MS_PER_TURN = 0.4;
const TARGET_GROWTH = 1.5;
const TARGET_STORAGE = 2;

const cfg = {
  oursTurns: envInt("BENCH_OURS_TURNS", 200),
  oursWarmup: envInt("BENCH_OURS_WARMUP", 50),
  lgTurns: envInt("BENCH_LG_TURNS", 50),
  lgWarmup: envInt("BENCH_LG_WARMUP", 5),
  lgMemTurns: envInt("BENCH_LG_MEM_TURNS", 20),
  threadTurns: envInt("BENCH_THREAD_TURNS", 200),
  threadReps: envInt("BENCH_THREAD_REPS", 5),
  lgThreadTurns: envInt("BENCH_LG_THREAD_TURNS", 200),
  lgThreadBudgetMs: envInt("BENCH_LG_THREAD_BUDGET_MS", 30_000),
  leadTurns: envInt("BENCH_LEAD_TURNS", 100),
  leadWarmup: envInt("BENCH_LEAD_WARMUP", 20),
  skipLgThread: flagOrEnv("--no-lg-thread", "BENCH_SKIP_LG_THREAD"),
  forceLead: flagOrEnv("--lead", "BENCH_LEAD"),
  skipLead: flagOrEnv("--no-lead", "BENCH_SKIP_LEAD"),
};

const ms = (v: number): string => `${round(v, 3)} ms`;
const turnLine = (f: { meanMs: number; medianMs: number; cpuMs: number }): string =>
  `${ms(f.meanMs)} / turn (median ${ms(f.medianMs)}, cpu ${ms(f.cpuMs)})`;
const verdict = (ok: boolean): string => (ok ? "PASS" : "MISS");
const rawBytes = (messages: readonly unknown[]): number => messages.reduce<number>((n, m) => n + JSON.stringify(m).length, 0);

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-runtime-"));
  const figures: ResultFigures = {};
  const started = Date.now();
  process.stdout.write(`bench:runtime  node ${process.version}  ${process.platform}/${process.arch}  tmp ${dir}\n`);
  try {
    // 1a. Ours: 8 no-op middlewares (all six hooks) + SQLite, fresh thread per turn.
    heading("1. per-turn overhead, fresh thread per turn (model -> tool -> model, instant model)");
    const ours = buildOurAgent(path.join(dir, "ours.sqlite"), 8);
    const oursFresh = await freshThreadTurns((t, x) => ourTurn(ours.agent, t, x), "ours", {
      warmup: cfg.oursWarmup,
      iterations: cfg.oursTurns,
    });
    report(`ours: createAgent + 8 no-op middlewares + SQLite (${oursFresh.turns} turns)`, turnLine(oursFresh));

    const bare = buildOurAgent(path.join(dir, "ours-bare.sqlite"), 0);
    const bareFresh = await freshThreadTurns((t, x) => ourTurn(bare.agent, t, x), "bare", {
      warmup: cfg.oursWarmup,
      iterations: cfg.oursTurns,
    });
    report(`ours, context: 0 middlewares + SQLite (${bareFresh.turns} turns)`, turnLine(bareFresh));
    await bare.store.close();

    // 1b. Reference: LangChain JS v1 createAgent + 8 createMiddleware + SqliteSaver.
    const ref = buildReferenceAgent(path.join(dir, "langgraph.sqlite"), 8);
    const refFresh = await freshThreadTurns((t, x) => referenceTurn(ref, t, x).then(() => undefined), "lg", {
      warmup: cfg.lgWarmup,
      iterations: cfg.lgTurns,
    });
    report(`langgraph: langchain createAgent + 8 middlewares + SqliteSaver (${refFresh.turns} turns)`, turnLine(refFresh));
    const refMem = buildReferenceAgent(null, 8);
    const refMemFresh = await freshThreadTurns((t, x) => referenceTurn(refMem, t, x).then(() => undefined), "lgmem", {
      warmup: 2,
      iterations: cfg.lgMemTurns,
    });
    report(`langgraph, context: same + MemorySaver (${refMemFresh.turns} turns)`, turnLine(refMemFresh));
    const ratio = refFresh.meanMs / oursFresh.meanMs;
    const ratioMedian = refFresh.medianMs / oursFresh.medianMs;
    const ratioCpu = refFresh.cpuMs / oursFresh.cpuMs;
    const bareRatio = refFresh.meanMs / bareFresh.meanMs;
    report(`ratio langgraph / ours, mean wall-clock (target >= ${TARGET_RATIO})`, `${round(ratio, 1)}x  ${verdict(ratio >= TARGET_RATIO)}`);
    report(`ratio by median wall-clock / by CPU time`, `${round(ratioMedian, 1)}x / ${round(ratioCpu, 1)}x`);
    report(`ratio langgraph / ours with 0 middlewares (target >= ${TARGET_RATIO})`, `${round(bareRatio, 1)}x  ${verdict(bareRatio >= TARGET_RATIO)}`);
    report(`ours per turn, 8 / 0 middlewares (target <= ${TARGET_MS_PER_TURN} ms)`, `${ms(oursFresh.meanMs)} ${verdict(oursFresh.meanMs <= TARGET_MS_PER_TURN)} / ${ms(bareFresh.meanMs)} ${verdict(bareFresh.meanMs <= TARGET_MS_PER_TURN)}`);
    Object.assign(figures, {
      ours_ms_per_turn: round(oursFresh.meanMs, 4),
      langgraph_ms_per_turn: round(refFresh.meanMs, 3),
      ratio: round(ratio, 1),
      ours_median_ms_per_turn: round(oursFresh.medianMs, 4),
      langgraph_median_ms_per_turn: round(refFresh.medianMs, 3),
      ratio_median: round(ratioMedian, 1),
      ours_cpu_ms_per_turn: round(oursFresh.cpuMs, 4),
      langgraph_cpu_ms_per_turn: round(refFresh.cpuMs, 3),
      ratio_cpu: round(ratioCpu, 1),
      ours_0mw_ms_per_turn: round(bareFresh.meanMs, 4),
      ours_0mw_median_ms_per_turn: round(bareFresh.medianMs, 4),
      ratio_0mw: round(bareRatio, 1),
      langgraph_memsaver_ms_per_turn: round(refMemFresh.meanMs, 3),
    });

    // 2. Same thread, growing history (ours).
    heading(`2. same thread, ${cfg.threadTurns} turns (ours, median of ${cfg.threadReps} threads per turn position)`);
    const series: number[][] = [];
    const cpuSeries: number[][] = [];
    let storedOverRaw = Number.NaN;
    for (let rep = 0; rep < cfg.threadReps; rep++) {
      const threadId = `ours-thread-${rep}`;
      const run = await sameThreadSeries((t, x) => ourTurn(ours.agent, t, x), threadId, cfg.threadTurns);
      series.push(run.wall);
      cpuSeries.push(run.cpu);
      if (rep === 0) {
        const snap = await ours.agent.getState(threadId);
        const messages = snap?.values.messages ?? [];
        const raw = rawBytes(messages);
        const stored = await ours.store.storedBytes(threadId);
        storedOverRaw = stored / raw;
        report(`messages in thread after ${cfg.threadTurns} turns`, `${messages.length}`);
        report(`raw message bytes (sum of JSON.stringify per message)`, `${raw}`);
        report(`checkpoint bytes stored (SqliteCheckpointStore.storedBytes)`, `${stored}`);
        report(`stored / raw (target <= ${TARGET_STORAGE})`, `${round(storedOverRaw, 3)}  ${verdict(storedOverRaw <= TARGET_STORAGE)}`);
      }
    }
    const perTurn = medianSeries(series);
    const last = perTurn.length;
    const early = windowMedian(perTurn, 6, Math.min(15, last));
    const late = windowMedian(perTurn, Math.max(1, last - 9), last);
    const growth = late / early;
    const growthMean = windowMean(perTurn, Math.max(1, last - 9), last) / windowMean(perTurn, 6, Math.min(15, last));
    report(`per turn around turn 10 (median of turns 6-15)`, ms(early));
    report(`per turn around turn ${last} (median of turns ${last - 9}-${last})`, ms(late));
    report(`turn ${last} / turn 10 (target <= ${TARGET_GROWTH})`, `${round(growth, 3)}  ${verdict(growth <= TARGET_GROWTH)}  (window means: ${round(growthMean, 3)})`);
    const cpuPerTurn = medianSeries(cpuSeries);
    const cpuEarly = windowMedian(cpuPerTurn, 6, Math.min(15, last));
    const cpuLate = windowMedian(cpuPerTurn, Math.max(1, last - 9), last);
    const cpuGrowth = cpuLate / cpuEarly;
    report(`same by CPU time: turn 10 / turn ${last} / ratio`, `${ms(cpuEarly)} / ${ms(cpuLate)} / ${round(cpuGrowth, 3)}`);
    Object.assign(figures, {
      turn200_over_turn10: round(growth, 3),
      stored_over_raw: round(storedOverRaw, 3),
      ours_turn10_ms: round(early, 4),
      ours_turn200_ms: round(late, 4),
      turn200_over_turn10_cpu: round(cpuGrowth, 3),
    });
    await ours.store.close();

    // 2b. Same thread on the reference, for context (time-capped).
    if (!cfg.skipLgThread) {
      heading(`2b. same thread on langgraph, for context (up to ${cfg.lgThreadTurns} turns, capped at ${cfg.lgThreadBudgetMs / 1000} s)`);
      const threadId = "lg-thread";
      let lastMessages: unknown[] = [];
      const { wall: lgSeries } = await sameThreadSeries(
        async (t, x) => {
          lastMessages = await referenceTurn(ref, t, x);
        },
        threadId,
        cfg.lgThreadTurns,
        cfg.lgThreadBudgetMs,
      );
      const n = lgSeries.length;
      const lgEarly = windowMedian(lgSeries, 6, Math.min(15, n));
      const lgLate = n >= 20 ? windowMedian(lgSeries, n - 9, n) : Number.NaN;
      const lgStored = ref.saver ? referenceStoredBytes(ref.saver, threadId) : Number.NaN;
      const lgRaw = rawBytes(lastMessages);
      report(`langgraph turns run on one thread`, `${n}${n < cfg.lgThreadTurns ? " (time cap reached)" : ""}`);
      report(`langgraph per turn around turn 10 (median of turns 6-15)`, ms(lgEarly));
      report(`langgraph per turn around turn ${n} (median of turns ${n - 9}-${n})`, `${ms(lgLate)}  (x${round(lgLate / lgEarly, 2)})`);
      report(`langgraph stored bytes / raw message bytes after ${n} turns`, `${lgStored} / ${lgRaw} = ${round(lgStored / lgRaw, 1)}`);
      Object.assign(figures, {
        langgraph_thread_turns: n,
        langgraph_turnN_over_turn10: round(lgLate / lgEarly, 3),
        langgraph_stored_over_raw: round(lgStored / lgRaw, 2),
      });
    }

    // 3. DeerFlow's lead middleware chain (when the factory exists).
    if (!cfg.skipLead) {
      heading("3. DeerFlow lead agent (makeLeadAgent, full default chain) per-turn overhead");
      const lead = await buildLeadAgent(path.join(dir, "lead.sqlite"), path.join(dir, "lead-home"));
      if (!lead.ok) {
        report("lead agent", `skipped: ${lead.reason}`);
        if (cfg.forceLead) process.exitCode = 1;
      } else {
        report(`lead middleware chain (${lead.middlewareNames.length})`, lead.middlewareNames.join(", ") || "(none)");
        const leadFresh = await freshThreadTurns((t, x) => leadTurn(lead.agent, t, x), "lead", {
          warmup: cfg.leadWarmup,
          iterations: cfg.leadTurns,
        });
        const leadRatio = refFresh.meanMs / leadFresh.meanMs;
        report(`lead agent + SQLite (${leadFresh.turns} turns)`, turnLine(leadFresh));
        report(`lead ratio langgraph(8 no-op) / lead (target >= ${TARGET_RATIO})`, `${round(leadRatio, 1)}x  ${verdict(leadRatio >= TARGET_RATIO)}`);
        report(`lead per turn (target <= ${TARGET_MS_PER_TURN} ms)`, `${ms(leadFresh.meanMs)} ${verdict(leadFresh.meanMs <= TARGET_MS_PER_TURN)}`);
        Object.assign(figures, {
          lead_ms_per_turn: round(leadFresh.meanMs, 4),
          lead_median_ms_per_turn: round(leadFresh.medianMs, 4),
          lead_cpu_ms_per_turn: round(leadFresh.cpuMs, 4),
          lead_ratio: round(leadRatio, 1),
          lead_middlewares: lead.middlewareNames.length,
        });
        await lead.store.close();
      }
    }
    ref.saver?.db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printBesideGateway(figures);
  process.stdout.write(`\ntotal bench time ${round((Date.now() - started) / 1000, 1)} s\n`);
  printResultLine(figures);
}

/**
 * The lone run's figures, to read beside `npm run bench:gateway` (run both):
 * the run loop waits for a durable commit only before a tool with side
 * effects and at its end, and the SQLite writer commits a lone run's small
 * batches on the main connection, while the gateway's many runs share group
 * commits on the writer thread. A change to either side shows in both
 * benches, so they are quoted together.
 */
function printBesideGateway(figures: ResultFigures): void {
  heading("summary (quote beside `npm run bench:gateway`: its over_reference must stay <= 1.3)");
  const row = (label: string, msKey: string, ratioKey: string) => {
    const m = figures[msKey];
    const r = figures[ratioKey];
    if (typeof m !== "number" || typeof r !== "number") return;
    report(label, `${ms(m)} ${verdict(m <= TARGET_MS_PER_TURN)}, ${round(r, 1)}x langgraph ${verdict(r >= TARGET_RATIO)}`);
  };
  row("0 middlewares + SQLite", "ours_0mw_ms_per_turn", "ratio_0mw");
  row("8 no-op middlewares + SQLite", "ours_ms_per_turn", "ratio");
  row("lead chain + SQLite", "lead_ms_per_turn", "lead_ratio");
  Object.assign(figures, {
    target_ms_per_turn: TARGET_MS_PER_TURN,
    target_ratio: TARGET_RATIO,
    run_beside: "npm run bench:gateway",
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:runtime failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
