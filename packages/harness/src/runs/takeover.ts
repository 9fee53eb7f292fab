/**
 * Takeover of runs whose process died. Each process sharing runs (PostgreSQL
 * leases, Redis bridge) polls for execution leases that expired more than
 * `grace` ago, claims each with the same compare-and-set every process uses
 * (so exactly one wins), and resumes the run from its thread's last
 * checkpoint (a queued run starts in its turn). A run that cannot be
 * resumed is ended as failed, with an `error` and the end marker on its
 * stream, so no run stays `running` after its process is gone.
 */
import { errorMessage } from "../errors";
import type { RunLease, RunLeases, RunOwnershipSettings } from "./backend-types";
import type { RunService } from "./run-service";

/** Timers the loop uses (injected by tests). */
export interface TakeoverTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** What {@link RunTakeover} needs. */
export interface RunTakeoverOptions {
  leases: RunLeases;
  /** This process's lease owner id. */
  ownerId: string;
  ownership: RunOwnershipSettings;
  /**
   * Resume a run this process just took the lease of (the lease is already
   * this process's). Resolves once the run executes here again; rejects when
   * it cannot be resumed (no checkpoint, the agent cannot be built…).
   */
  resume(lease: RunLease): Promise<void>;
  /**
   * End a taken-over run that cannot be resumed: `error` status with
   * `reason`, an `error` event and the end marker on its stream, lease and
   * thread slot released.
   */
  fail(lease: RunLease, reason: unknown): Promise<void>;
  /**
   * True while this process executes `runId` itself: its own lease looking
   * expired then means a late heartbeat, not a dead owner.
   */
  runsLocally(runId: string): boolean;
  /** Epoch ms (default `Date.now`). */
  now?: () => number;
  timers?: TakeoverTimers;
  /** Leases claimed per round (default 32). */
  batch?: number;
  log?: (message: string) => void;
}

/** What one round did. */
export interface TakeoverRound {
  /** Runs this process took over and resumed. */
  resumed: string[];
  /** Runs taken over that could not be resumed and were ended as failed. */
  failed: string[];
  /** Expired leases another process claimed first. */
  lost: string[];
}

const DEFAULT_TIMERS: TakeoverTimers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // the loop never keeps a process alive on its own
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Most rounds chained back to back when every round fills its batch (a mass expiry after a crash). */
const MAX_CHAINED_ROUNDS = 16;

/**
 * The takeover loop of one process: a round every `lease/3` (at least
 * 50 ms), so a dead owner's run is resumed within about lease + grace +
 * lease/3 of its last heartbeat. Rounds never overlap.
 */
export class RunTakeover {
  private readonly now: () => number;
  private readonly timers: TakeoverTimers;
  private readonly batch: number;
  private readonly log: (message: string) => void;
  private timer: unknown;
  private running: Promise<TakeoverRound> | undefined;
  private stopped = true;
  /** Set by stop(): a round in progress ends after the batch it is on. */
  private stopping = false;

  constructor(private readonly opts: RunTakeoverOptions) {
    this.now = opts.now ?? Date.now;
    this.timers = opts.timers ?? DEFAULT_TIMERS;
    this.batch = opts.batch ?? 32;
    this.log = opts.log ?? (() => undefined);
  }

  /** Time between rounds (ms). */
  get intervalMs(): number {
    return Math.max(50, Math.floor(this.opts.ownership.leaseMs / 3));
  }

  /** Start polling (the first round runs after one interval). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopping = false;
    this.schedule();
  }

  /** Stop polling; resolves after a round in progress finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /**
   * One round now: claim expired leases (oldest first) and resume their
   * runs. A round already in progress is returned instead of starting a
   * second one.
   */
  round(): Promise<TakeoverRound> {
    if (this.running) return this.running;
    const r = this.runRound().finally(() => {
      this.running = undefined;
    });
    this.running = r;
    return r;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.round()
        .catch((err) => this.log(`[runs] takeover round failed: ${(err as Error).message}`))
        .finally(() => this.schedule());
    }, this.intervalMs);
  }

  private async runRound(): Promise<TakeoverRound> {
    const out: TakeoverRound = { resumed: [], failed: [], lost: [] };
    const { leases, ownerId, ownership } = this.opts;
    const seen = new Set<string>();
    for (let chained = 0; chained < MAX_CHAINED_ROUNDS; chained++) {
      const now = this.now();
      // a lease counts as abandoned only after its grace period: a heartbeat may be a little late
      const deadline = now - ownership.graceMs;
      const expired = (await leases.expired(deadline, this.batch)).filter((l) => !seen.has(l.runId));
      for (const lease of expired) {
        seen.add(lease.runId);
        if (lease.owner === ownerId && this.opts.runsLocally(lease.runId)) continue;
        const taken = await leases.acquire(lease.runId, lease.threadId, ownerId, now + ownership.leaseMs, deadline);
        if (!taken) {
          out.lost.push(lease.runId);
          continue;
        }
        const mine: RunLease = { ...lease, owner: ownerId, expiresAt: now + ownership.leaseMs };
        this.log(`[runs] taking over run ${lease.runId} of thread ${lease.threadId} from ${lease.owner} (lease expired ${now - lease.expiresAt} ms ago)`);
        try {
          await this.opts.resume(mine);
          out.resumed.push(lease.runId);
        } catch (err) {
          this.log(`[runs] run ${lease.runId} cannot be resumed: ${errorMessage(err)}`);
          try {
            await this.opts.fail(mine, err);
          } catch (failErr) {
            // the lease stays ours and expires again: the next round (here or elsewhere) retries the ending
            this.log(`[runs] ending run ${lease.runId} as failed did not complete: ${errorMessage(failErr)}`);
            continue;
          }
          // (a run that had already ended only left its lease behind: dropping it ends the retries)
          await leases.release(lease.runId, ownerId).catch(() => undefined);
          out.failed.push(lease.runId);
        }
      }
      if (expired.length < this.batch || this.stopping) break;
    }
    return out;
  }
}

/**
 * The takeover loop of `service`'s process, over its backends: resume with
 * {@link RunService.resume}, end what cannot be resumed with
 * {@link RunService.abandon}. Started by the caller (only shared backends
 * need it: on one process's backends nobody else could take a run over).
 */
export function runTakeoverFor(
  service: RunService,
  options: { log: (message: string) => void; now?: () => number; timers?: TakeoverTimers; batch?: number },
): RunTakeover {
  const backends = service.runBackends;
  return new RunTakeover({
    leases: backends.leases,
    ownerId: backends.ownerId,
    ownership: backends.ownership,
    resume: async (lease) => {
      await service.resume(lease.runId);
    },
    fail: (lease, reason) =>
      service.abandon(lease.runId, `The server process executing this run stopped (lease of ${lease.runId} expired), and it could not be resumed here: ${errorMessage(reason)}`, reason),
    runsLocally: (runId) => service.get(runId) !== undefined,
    ...options,
  });
}
