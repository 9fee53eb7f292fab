export { mean, median, percentile, round, summarize } from "./stats";
export type { Summary } from "./stats";
export { collectGarbage, cpuMs, nowMs, timeOnce, timeSamples } from "./timing";
export type { SampleOptions } from "./timing";
export { envInt, flagOrEnv } from "./env";
export { heading, printResultLine, report } from "./result";
export type { ResultFigures } from "./result";
