/**
 * Where the scale bench's own time goes: every step (start PostgreSQL, start
 * a deployment's processes, its warm-up, burst, cancels…) is timed, printed
 * as it ends, and summed per phase at the end, so a slow bench shows whether
 * start-up or the measured work dominates.
 */
import { report } from "../lib";

interface Step {
  phase: string;
  step: string;
  ms: number;
}

/** The bench's steps in the order they ended. */
export class Timeline {
  private readonly steps: Step[] = [];

  /** Time `fn` as `phase: step`, print it when it ends. */
  async time<T>(phase: string, step: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.add(phase, step, performance.now() - t0);
    }
  }

  /** Record a step timed elsewhere. */
  add(phase: string, step: string, ms: number): void {
    this.steps.push({ phase, step, ms });
    report(`${phase}: ${step}`, `${(ms / 1000).toFixed(2)} s`);
  }

  /** Milliseconds of every step of `phase` (steps of one phase may overlap another's). */
  total(phase: string, step?: string): number {
    return this.steps.filter((s) => s.phase === phase && (step === undefined || s.step === step)).reduce((sum, s) => sum + s.ms, 0);
  }

  /** Milliseconds of every step named `step`, over all phases. */
  totalOf(step: string): number {
    return this.steps.filter((s) => s.step === step).reduce((sum, s) => sum + s.ms, 0);
  }

  /** The phases, in the order their first step ended. */
  phases(): string[] {
    return [...new Set(this.steps.map((s) => s.phase))];
  }

  /** One line per phase: its steps' sum and each step. */
  print(): void {
    for (const phase of this.phases()) {
      const steps = this.steps.filter((s) => s.phase === phase);
      report(`${phase}`, `${(this.total(phase) / 1000).toFixed(1)} s = ${steps.map((s) => `${s.step} ${(s.ms / 1000).toFixed(1)}`).join(" + ")}`);
    }
  }
}
