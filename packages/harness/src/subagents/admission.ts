import { RunCancelledError } from "../errors";

/** Default process-wide number of sub-agents running at once. */
export const DEFAULT_MAX_RUNNING_SUBAGENTS = 8;
/**
 * Floor of the admission limit: one response keeps at most 4 `task` calls,
 * so with at least 4 slots every call a response keeps can start at once
 * (one busy thread never queues its own batch behind itself).
 */
export const MIN_MAX_RUNNING_SUBAGENTS = 4;

interface Waiter {
  resolve(release: () => void): void;
  reject(err: unknown): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * A FIFO admission gate for sub-agents across the whole process, so many
 * threads cannot start unbounded sub-agents at once. `acquire` resolves with
 * a release function once a slot is free; waiters are served in arrival
 * order; a waiter whose signal aborts leaves the queue.
 */
export class SubagentAdmission {
  private limitValue: number;
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(maxRunning: number = DEFAULT_MAX_RUNNING_SUBAGENTS) {
    this.limitValue = SubagentAdmission.clamp(maxRunning);
  }

  /** Clamp a configured limit into `[4, 64]`. */
  static clamp(n: number): number {
    if (!Number.isFinite(n)) return DEFAULT_MAX_RUNNING_SUBAGENTS;
    return Math.min(64, Math.max(MIN_MAX_RUNNING_SUBAGENTS, Math.trunc(n)));
  }

  get limit(): number {
    return this.limitValue;
  }

  /** Change the limit (config reload); newly free slots are handed to waiters. */
  setLimit(n: number): void {
    this.limitValue = SubagentAdmission.clamp(n);
    this.drain();
  }

  /** Sub-agents holding a slot. */
  get active(): number {
    return this.running;
  }

  /** Sub-agents waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Wait for a slot (FIFO). Rejects with RunCancelledError when `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new RunCancelledError("sub-agent cancelled before it started"));
    if (this.running < this.limitValue && this.queue.length === 0) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          reject(new RunCancelledError("sub-agent cancelled while queued"));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running--;
      this.drain();
    };
  }

  private drain(): void {
    while (this.running < this.limitValue && this.queue.length) {
      const w = this.queue.shift() as Waiter;
      if (w.signal && w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      this.running++;
      w.resolve(this.releaser());
    }
  }
}

let shared: SubagentAdmission | undefined;

/** The process-wide admission gate (created on first use with the default limit). */
export function sharedSubagentAdmission(): SubagentAdmission {
  shared ??= new SubagentAdmission();
  return shared;
}
