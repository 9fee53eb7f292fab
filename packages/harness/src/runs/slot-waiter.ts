import { RunCancelledError, RunServiceError } from "../errors";
import type { MultitaskStrategy } from "../persistence";
import type { RunBackends, StreamBridge } from "./backend-types";

/** Longest wait between two tries for a thread's slot when no `thread_released` signal came (a lost signal). */
const MAX_RECHECK_MS = 1000;

interface Waiter {
  wake(): void;
}

/**
 * Takes threads' run slots across processes ({@link RunLock}). A run whose
 * thread is held elsewhere waits here: it tries again when the holder's
 * `thread_released` signal arrives, and on a timer in case the signal was
 * lost or the holder died (its slot then expires).
 */
export class SlotWaiter {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private closed = false;

  constructor(
    private readonly backends: RunBackends,
    private readonly clock: () => number,
  ) {}

  /** Take the thread's slot for `runId` if it is free, expired or already the run's. */
  tryAcquire(threadId: string, runId: string): Promise<boolean> {
    const now = this.clock();
    return this.backends.lock.acquire(threadId, runId, this.backends.ownerId, now + this.backends.ownership.leaseMs, now);
  }

  /**
   * A new run's claim on its thread across processes, as its strategy says:
   * true when it holds the slot now; false when it must wait for it (under
   * `interrupt` / `rollback` the holder was asked to stop first). Throws
   * `run_conflict` under `reject` when another process's run holds it.
   */
  async claim(threadId: string, runId: string, strategy: MultitaskStrategy): Promise<boolean> {
    if (await this.tryAcquire(threadId, runId)) return true;
    if (strategy === "reject") throw new RunServiceError("run_conflict", `Thread ${threadId} already has an active run`);
    const holder = await this.backends.lock.holder(threadId);
    if (holder && (strategy === "interrupt" || strategy === "rollback")) {
      await this.backends.signals.publish({ type: "cancel", runId: holder.runId, action: strategy });
    }
    return false;
  }

  /** Wait until the run holds the thread's slot. Rejects when `signal` aborts or the service closes. */
  async acquire(threadId: string, runId: string, signal: AbortSignal): Promise<void> {
    const recheckMs = Math.max(20, Math.min(MAX_RECHECK_MS, Math.floor(this.backends.ownership.leaseMs / 3)));
    for (;;) {
      if (signal.aborted) throw signal.reason ?? new RunCancelledError();
      if (this.closed) throw new RunServiceError("run_service_closed", "Server is shutting down");
      if ((await this.mayTake(threadId, runId)) && (await this.tryAcquire(threadId, runId))) return;
      await this.nextTry(threadId, recheckMs, signal);
    }
  }

  /**
   * False while the holder's slot expired but its run still has a lease: its
   * process died and the run waits to be taken over and resumed, which goes
   * before the runs queued behind it (the takeover releases the lease of a
   * run it cannot resume, and the slot with it).
   */
  private async mayTake(threadId: string, runId: string): Promise<boolean> {
    const holder = await this.backends.lock.holder(threadId);
    if (!holder || holder.runId === runId || holder.expiresAt > this.clock()) return true;
    return !(await this.backends.leases.get(holder.runId));
  }

  /** The thread's slot was released somewhere: its waiters try again now. */
  released(threadId: string): void {
    const set = this.waiting.get(threadId);
    if (!set) return;
    this.waiting.delete(threadId);
    for (const w of set) w.wake();
  }

  /** Wake every waiter (they then see the service closed). */
  close(): void {
    this.closed = true;
    for (const set of this.waiting.values()) for (const w of set) w.wake();
    this.waiting.clear();
  }

  private nextTry(threadId: string, recheckMs: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      let set = this.waiting.get(threadId);
      if (!set) {
        set = new Set();
        this.waiting.set(threadId, set);
      }
      const waiter: Waiter = {
        wake: () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", waiter.wake);
          this.waiting.get(threadId)?.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, recheckMs);
      timer.unref?.();
      signal.addEventListener("abort", waiter.wake, { once: true });
      set.add(waiter);
    });
  }
}

/** Resolves when a run's stream ends (its `end`, or a `gap`: there is nothing more to read). */
export function untilStreamEnd(bridge: StreamBridge, runId: string): Promise<void> {
  return new Promise<void>((resolve) => {
    let stop: (() => void) | undefined;
    let ended = false;
    stop = bridge.subscribe(runId, null, (item) => {
      if (item.kind === "event") return;
      ended = true;
      stop?.();
      resolve();
    });
    if (ended) stop();
  });
}
