/** Summary statistics of a list of samples (milliseconds unless stated otherwise). */
export interface Summary {
  n: number;
  mean: number;
  median: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
}

/** Arithmetic mean; `NaN` for an empty list. */
export function mean(samples: readonly number[]): number {
  if (!samples.length) return Number.NaN;
  let sum = 0;
  for (const s of samples) sum += s;
  return sum / samples.length;
}

/**
 * The `p`-th percentile (0..100) with linear interpolation between the two
 * nearest ranks; `NaN` for an empty list.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** Median (50th percentile). */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** n, mean, median, p90, p99, min and max of `samples`. */
export function summarize(samples: readonly number[]): Summary {
  return {
    n: samples.length,
    mean: mean(samples),
    median: median(samples),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    min: samples.length ? Math.min(...samples) : Number.NaN,
    max: samples.length ? Math.max(...samples) : Number.NaN,
  };
}

/** Round to `digits` decimals (keeps JSON result lines short and comparable). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
