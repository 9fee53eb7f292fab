import type { CheckpointFence } from "../checkpoints/types";
import type { RunWriteFence } from "../persistence";
import { errorMessage, RunCancelledError, RunServiceError } from "../errors";
import type { RunBackends, RunLeases, RunStreamWriter } from "./backend-types";
import { TERMINAL } from "./local-run";
import type { LocalRun } from "./local-run";
import type { RunResult } from "../runtime";

/** The run a lease is held for. */
interface LeasedRun {
  readonly runId: string;
  readonly threadId: string;
  /** True once this process holds the run's lease (set by a takeover before the run executes). */
  holdsLease: boolean;
  /** The epoch of the claim (when the leases count epochs). */
  leaseEpoch?: number;
  /** The last confirmed expiry plus grace (set by the keeper). */
  leaseSafeUntil?: number;
}

/**
 * Claim a run's lease: `{epoch}` when taken (the claim's fencing token, or
 * undefined on leases without epochs), undefined when another live owner
 * holds it.
 */
export async function claimLease(
  leases: RunLeases,
  runId: string,
  threadId: string,
  owner: string,
  expiresAt: number,
  now: number,
): Promise<{ epoch: number | undefined } | undefined> {
  if (leases.claim) {
    const epoch = await leases.claim(runId, threadId, owner, expiresAt, now);
    return epoch === undefined ? undefined : { epoch };
  }
  return (await leases.acquire(runId, threadId, owner, expiresAt, now)) ? { epoch: undefined } : undefined;
}

/** Codes that say another process owns the run now: a refused fenced checkpoint write, stream append or record write. */
const TAKEN_OVER_CODES = new Set(["checkpoint_stale_owner", "stream_bridge_stale_writer", "run_stale_owner"]);

/** True when `err` says the run was taken over by another process (this one is a stale owner). */
export function isTakenOver(err: unknown): boolean {
  return typeof err === "object" && err !== null && TAKEN_OVER_CODES.has((err as { code?: unknown }).code as string);
}

/**
 * Settle a run another process took over: `interrupted` here, with why; its
 * end is the new owner's to write. Its stream's clients in this process are
 * let go (`error` at the last event the backend holds, then `end`), storing
 * nothing: resuming from that id, on any process, they follow the new owner.
 */
export function endTakenOver(run: LocalRun, writer: RunStreamWriter, result: RunResult | undefined, failure: unknown): void {
  writer.abandon?.(`Run ${run.runId} is executed by another process now; this process stopped streaming it (resume from this event's id to follow it)`);
  run.status = "interrupted";
  const error = `Run ${run.runId} is executed by another process now (its lease was taken over); this process stopped it`;
  run.resolveDone({ runId: run.runId, threadId: run.threadId, status: "interrupted", error, result, failure });
  run.resolveRecorded();
}

/**
 * True (and the run stopped here as taken over) when the run's lease may
 * have been taken over: the clock is past its last confirmed expiry plus
 * grace (this process stalled or could not renew), so another process may
 * own it now. Checked before each event is published, so an owner that wakes
 * from a stall shows nobody what it produced meanwhile; if nobody took the
 * run over, the takeover (here or elsewhere) resumes it from its checkpoint.
 */
export function leaseMayBeLost(run: LocalRun, now: number, log: (message: string) => void): boolean {
  if (run.leaseLost) return true;
  if (run.leaseSafeUntil === undefined || now <= run.leaseSafeUntil) return false;
  run.leaseLost = true;
  log(`the lease of run ${run.runId} ran out ${now - run.leaseSafeUntil} ms past its grace without a renewal; another process may own it now, stopping it here`);
  run.controller.abort(new RunCancelledError("lease_lost"));
  return true;
}

/** The fence of an owned run's record writes (shared backends, a lease with an epoch), as the run store takes it. */
export function recordFence(run: LeasedRun, shared: boolean): { fence: RunWriteFence } | undefined {
  return shared && run.leaseEpoch !== undefined ? { fence: { epoch: run.leaseEpoch } } : undefined;
}

/**
 * The fence of an owned run's checkpoint writes (shared backends): its
 * lease claim's epoch. A write the store refuses as stale stops the run
 * here at once, as a lost lease does: no further model or tool call, no
 * further event, and its end is the new owner's to write.
 */
export function runFence(run: LocalRun, epoch: number, log: (message: string) => void): CheckpointFence {
  return {
    runId: run.runId,
    epoch,
    onStale: (err) => {
      if (run.leaseLost || TERMINAL.has(run.status)) return;
      run.leaseLost = true;
      log(`run ${run.runId} was taken over by another process (${errorMessage(err)}); stopping it here`);
      run.controller.abort(new RunCancelledError("lease_lost"));
    },
  };
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
    const { leaseMs, graceMs } = this.backends.ownership;
    // (a lease taken by the caller just now — a takeover, a new run's reservation — is as fresh as one taken here)
    this.run.leaseSafeUntil = this.clock() + leaseMs + graceMs;
    if (!this.run.holdsLease) {
      const now = this.clock();
      const claimed = await claimLease(this.backends.leases, this.run.runId, this.run.threadId, this.backends.ownerId, now + leaseMs, now);
      if (!claimed) throw new RunServiceError("run_not_active_here", `Run ${this.run.runId} is executed by another process`);
      this.run.holdsLease = true;
      this.run.leaseEpoch = claimed.epoch;
    }
    this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(leaseMs / 3)));
    this.timer.unref?.();
  }

  /**
   * Renew the lease now: false when another process took it over meanwhile
   * (a queued run checks this before it starts, so a run taken over while it
   * waited here never executes twice).
   */
  async confirm(): Promise<boolean> {
    return this.backends.leases.renew(this.run.runId, this.backends.ownerId, this.clock() + this.backends.ownership.leaseMs);
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
      if (kept) run.leaseSafeUntil = expiresAt + backends.ownership.graceMs;
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
 * `onLost` runs after a lost lease stopped the run (a queued run leaves its queue).
 */
export function runLeaseKeeper(run: LocalRun, backends: RunBackends, clock: () => number, log: (message: string) => void, onLost?: () => void): LeaseKeeper {
  return new LeaseKeeper(
    run,
    backends,
    clock,
    () => {
      run.leaseLost = true;
      log(`lost the lease of run ${run.runId}; stopping it here`);
      run.controller.abort(new RunCancelledError("lease_lost"));
      onLost?.();
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
