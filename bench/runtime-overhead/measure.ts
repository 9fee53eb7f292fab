import { cpuMs, mean, median, nowMs, timeSamples } from "../lib";

/** A function that runs one full turn on a thread. */
export type TurnFn = (threadId: string, text: string) => Promise<void>;

/** Per-turn figures of one agent on fresh threads. */
export interface FreshThreadFigures {
  /** Timed turns actually run. */
  turns: number;
  /** Mean wall-clock per turn (total / turns), GC included. */
  meanMs: number;
  medianMs: number;
  /** Process CPU time (user + system) per turn: robust when other jobs share the cores. */
  cpuMs: number;
}

/**
 * Time `iterations` turns, each on a new thread (so history size is not a
 * factor), after `warmup` untimed turns.
 */
export async function freshThreadTurns(
  turn: TurnFn,
  prefix: string,
  options: { warmup: number; iterations: number; budgetMs?: number },
): Promise<FreshThreadFigures> {
  for (let i = 0; i < options.warmup; i++) await turn(`${prefix}-warm-${i}`, "go");
  const cpu0 = cpuMs();
  const samples = await timeSamples((i) => turn(`${prefix}-fresh-${i}`, "go"), { iterations: options.iterations, budgetMs: options.budgetMs });
  const cpu = cpuMs() - cpu0;
  return { turns: samples.length, meanMs: mean(samples), medianMs: median(samples), cpuMs: cpu / samples.length };
}

/** Per-turn durations of one thread: wall-clock and process CPU time (ms). */
export interface ThreadSeries {
  wall: number[];
  cpu: number[];
}

/**
 * Run `turns` turns on ONE thread and return each turn's wall-clock and CPU
 * duration (ms), stopping early when `budgetMs` is spent.
 */
export async function sameThreadSeries(turn: TurnFn, threadId: string, turns: number, budgetMs = Infinity): Promise<ThreadSeries> {
  const out: ThreadSeries = { wall: [], cpu: [] };
  const start = nowMs();
  for (let i = 1; i <= turns; i++) {
    const c0 = cpuMs();
    const t0 = nowMs();
    await turn(threadId, `turn ${i}`);
    out.wall.push(nowMs() - t0);
    out.cpu.push(cpuMs() - c0);
    if (nowMs() - start > budgetMs) break;
  }
  return out;
}

/**
 * Combine repeated series position by position with the median (one GC pause
 * in one repetition does not move a position).
 */
export function medianSeries(series: readonly number[][]): number[] {
  const len = Math.min(...series.map((s) => s.length));
  return Array.from({ length: len }, (_, i) => median(series.map((s) => s[i])));
}

/**
 * Median duration of turns `from`..`to` (1-based, inclusive) of a series:
 * the robust "average" of a window when other processes share the CPU.
 * Returns NaN when the series is shorter than `to`.
 */
export function windowMedian(series: readonly number[], from: number, to: number): number {
  if (series.length < to || from < 1 || from > to) return Number.NaN;
  return median(series.slice(from - 1, to));
}

/**
 * Mean duration of turns `from`..`to` (1-based, inclusive) of a series.
 * Returns NaN when the series is shorter than `to`.
 */
export function windowMean(series: readonly number[], from: number, to: number): number {
  if (series.length < to || from < 1 || from > to) return Number.NaN;
  return mean(series.slice(from - 1, to));
}
