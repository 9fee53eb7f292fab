import { performance } from "node:perf_hooks";

/** A monotonic clock in milliseconds. */
export function nowMs(): number {
  return performance.now();
}

/** CPU time (user + system) this process has used so far, in ms. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Time one async call; returns its duration in ms. */
export async function timeOnce(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Options of {@link timeSamples}. */
export interface SampleOptions {
  /** Untimed calls first (JIT warm-up). */
  warmup?: number;
  /** Timed calls. */
  iterations: number;
  /** Stop early once this much timed wall-clock has been spent (ms). */
  budgetMs?: number;
}

/**
 * Call `fn(i)` `warmup` times untimed, then `iterations` times timed, one at a
 * time. Returns the per-call durations in ms (fewer when `budgetMs` ran out).
 */
export async function timeSamples(fn: (i: number) => Promise<unknown>, options: SampleOptions): Promise<number[]> {
  const warmup = options.warmup ?? 0;
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  const start = performance.now();
  for (let i = 0; i < options.iterations; i++) {
    samples.push(await timeOnce(() => fn(warmup + i)));
    if (options.budgetMs !== undefined && performance.now() - start > options.budgetMs) break;
  }
  return samples;
}

/** Run a full garbage collection when node was started with `--expose-gc` (no-op otherwise). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === "function") gc();
}
