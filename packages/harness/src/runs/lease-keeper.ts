import { errorMessage, RunCancelledError, RunServiceError } from "../errors";
import type { RunBackends } from "./backend-types";
import { TERMINAL } from "./local-run";
import type { LocalRun } from "./local-run";

/** The run a lease is held for. */
interface LeasedRun {
  readonly runId: string;
  readonly threadId: string;
  /** True once this process holds the run's lease (set by a takeover before the run executes). */
  holdsLease: boolean;
}

/**
 * Holds one executing run's lease: takes it (unless a takeover already
 * did) and renews it, and on shared backends the thread's slot too, every
 * third of the lease length. A renewal refused because another process took
 * the lease calls `lost` once; a failing backend is reported to `failed` and
 * retried on the next beat (the lease then lapses unless the backend comes
 * back in time).
 */
export class LeaseKeeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lostOnce = false;

  constructor(
    private readonly run: LeasedRun,
    private readonly backends: RunBackends,
    private readonly clock: () => number,
    private readonly lost: () => void,
    private readonly failed: (err: unknown) => void,
    /** Checked on every beat too: the run's stream still stores what it published (rejects when its backend failed). */
    private readonly probe?: () => Promise<void>,
    private readonly probeFailed?: (err: unknown) => void,
  ) {}

  /** Take the lease (throws `run_not_active_here` when another live owner holds it) and start renewing it. */
  async hold(): Promise<void> {
    const { leaseMs } = this.backends.ownership;
    if (!this.run.holdsLease) {
      const now = this.clock();
      this.run.holdsLease = await this.backends.leases.acquire(this.run.runId, this.run.threadId, this.backends.ownerId, now + leaseMs, now);
      if (!this.run.holdsLease) throw new RunServiceError("run_not_active_here", `Run ${this.run.runId} is executed by another process`);
    }
    this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 3)));
    this.timer.unref?.();
  }

  /** Stop renewing (the run ended). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async renew(): Promise<void> {
    const { backends, run } = this;
    if (this.probe) {
      // Not awaited with the renewal: a slow stream must not delay the lease.
      this.probe().catch((err: unknown) => {
        if (this.timer) this.probeFailed?.(err);
      });
    }
    const expiresAt = this.clock() + backends.ownership.leaseMs;
    try {
      const kept = await backends.leases.renew(run.runId, backends.ownerId, expiresAt);
      if (backends.shared) await backends.lock.renew(run.threadId, run.runId, backends.ownerId, expiresAt);
      if (!kept && this.timer && !this.lostOnce) {
        this.lostOnce = true;
        this.stop();
        this.lost();
      }
    } catch (err) {
      this.failed(err);
    }
  }
}

/**
 * The keeper of an executing run's lease as the run service uses it: a
 * renewal refused because another process took the run over stops it here
 * without writing its end (`leaseLost`); a stream that no longer stores
 * events (its backend failed) stops it too, and it ends as `error` with the
 * backend's message (its writes so far stay: the thread is at its last step).
 */
export function runLeaseKeeper(run: LocalRun, backends: RunBackends, clock: () => number, log: (message: string) => void): LeaseKeeper {
  return new LeaseKeeper(
    run,
    backends,
    clock,
    () => {
      run.leaseLost = true;
      log(`lost the lease of run ${run.runId}; stopping it here`);
      run.controller.abort(new RunCancelledError("lease_lost"));
    },
    (err) => log(`could not renew the lease of run ${run.runId}: ${errorMessage(err)}`),
    () => run.writer.then((w) => w.flush()),
    (err) => {
      if (TERMINAL.has(run.status) || run.streamError !== undefined) return;
      run.streamError = err instanceof Error ? err : new Error(String(err));
      log(`the event stream of run ${run.runId} failed; stopping the run: ${errorMessage(err)}`);
      run.controller.abort(new RunCancelledError("stream"));
    },
  );
}
