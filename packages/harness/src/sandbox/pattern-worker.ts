import { Worker } from "node:worker_threads";
import { SandboxError } from "../errors";

/**
 * Time one grep or glob call may spend matching its pattern. Why a budget
 * and a worker: the pattern comes from the model and the names and lines it
 * runs over from the agent, so `(a*)*b` on a line of a's (or a glob such as
 * `*a*a*a*a*b` on a long file name) backtracks for minutes; on the gateway's
 * own thread that froze every thread and `/health`. In a worker the call
 * fails alone when the budget runs out (the worker is terminated).
 */
export const PATTERN_TIME_BUDGET_MS = 5000;

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", ({ id, source, flags, inputs, max, count }) => {
  let re;
  try {
    re = new RegExp(source, count ? flags.replace("g", "") + "g" : flags);
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
    return;
  }
  const hits = [];
  if (count) for (let i = 0; i < inputs.length; i++) hits.push((inputs[i].match(re) || []).length);
  else for (let i = 0; i < inputs.length && hits.length < max; i++) if (re.test(inputs[i])) hits.push(i);
  parentPort.postMessage({ id, hits });
});
`;

/**
 * Idle workers kept for the next call: starting one costs 25–45 ms, more than
 * a whole grep over a small workspace. A worker returns here only after a
 * call ended normally; one that ran out of budget or failed is terminated.
 * Idle workers are unref'd, so they never keep the process alive.
 */
const IDLE_WORKERS: Worker[] = [];
const MAX_IDLE_WORKERS = 2;

/** Workers waiting for the next call (diagnostics and tests). */
export function idlePatternWorkers(): number {
  return IDLE_WORKERS.length;
}

function acquireWorker(): Worker {
  const w = IDLE_WORKERS.pop() ?? new Worker(WORKER_SOURCE, { eval: true });
  w.ref();
  return w;
}

function releaseWorker(w: Worker): void {
  if (IDLE_WORKERS.length >= MAX_IDLE_WORKERS) {
    void w.terminate();
    return;
  }
  w.unref();
  IDLE_WORKERS.push(w);
}

interface Reply {
  id: number;
  hits?: number[];
  error?: string;
}

/**
 * Matches one pattern over batches of strings in a worker thread, within
 * {@link PATTERN_TIME_BUDGET_MS} of matching for the whole call (all
 * batches together). Create one per grep/glob call and `close()` it when done (its worker then serves
 * the next call).
 */
export class PatternMatcher {
  private worker?: Worker;
  /** Matching time used so far (reading files between batches does not count). */
  private spent = 0;
  private nextId = 0;

  constructor(
    private readonly source: string,
    private readonly flags: string,
    /** What the error names (the pattern as the model wrote it). */
    private readonly shown: string,
    private readonly budgetMs = PATTERN_TIME_BUDGET_MS,
  ) {}

  /** Indexes of the inputs the pattern matches (at most `max`). @throws SandboxError `pattern_too_slow` / `invalid_pattern`. */
  match(inputs: string[], max = Number.MAX_SAFE_INTEGER): Promise<number[]> {
    return this.run(inputs, max, false);
  }

  /** How many times the pattern occurs in each input (global matching). @throws as {@link match}. */
  count(inputs: string[]): Promise<number[]> {
    return this.run(inputs, Number.MAX_SAFE_INTEGER, true);
  }

  private run(inputs: string[], max: number, count: boolean): Promise<number[]> {
    if (inputs.length === 0) return Promise.resolve([]);
    this.worker ??= acquireWorker();
    const worker = this.worker;
    const id = this.nextId++;
    const started = performance.now();
    return new Promise<number[]>((resolve, reject) => {
      const done = () => {
        this.spent += performance.now() - started;
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
      };
      const onMessage = (r: Reply) => {
        if (r.id !== id) return;
        done();
        if (r.error !== undefined) reject(new SandboxError(`Invalid regular expression: ${r.error}`, { code: "invalid_pattern" }));
        else resolve(r.hits ?? []);
      };
      const onError = (err: Error) => {
        done();
        this.worker = undefined;
        reject(new SandboxError(`Pattern matching failed: ${err.message}`, { code: "invalid_pattern" }));
      };
      const timer = setTimeout(() => {
        done();
        this.worker = undefined;
        void worker.terminate();
        const shown = this.shown.length > 200 ? `${this.shown.slice(0, 200)}…` : this.shown;
        reject(
          new SandboxError(`The pattern '${shown}' took longer than ${this.budgetMs / 1000}s to match (it backtracks catastrophically on this input); use a simpler pattern or a literal search.`, {
            code: "pattern_too_slow",
          }),
        );
      }, Math.max(0, this.budgetMs - this.spent));
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.postMessage({ id, source: this.source, flags: this.flags, inputs, max, count });
    });
  }

  /** Hand the worker back for the next call (idempotent; call when no match is pending). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) releaseWorker(w);
  }
}
