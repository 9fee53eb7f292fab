import type { ProvisionerBackend } from "./backend";

/** Longest gap between two expiry sweeps (the Docker tier's bound too). */
export const MAX_EXPIRY_SWEEP_MS = 60_000;

/** Default idle timeout (seconds): the providers' `sandbox.idle_timeout` default. */
export const DEFAULT_PROVISIONER_IDLE_TIMEOUT_S = 600;

/** Options of {@link IdleExpiry}. */
export interface IdleExpiryOptions {
  backend: ProvisionerBackend;
  /** A sandbox no request reached for this long is deleted; 0 never deletes one. */
  idleTimeoutMs: number;
  /** Clock (ms); tests inject one. Default `Date.now`. */
  now?: () => number;
  /** Sweep period; default a quarter of the timeout, between 1 s and {@link MAX_EXPIRY_SWEEP_MS}. */
  sweepIntervalMs?: number;
  log?(line: string): void;
}

/**
 * Deletes sandboxes nobody uses. The server that asked for a sandbox deletes
 * it after its own `idle_timeout`, but a server that crashed, was killed or
 * lost its network never does: without this the provisioner would keep its
 * containers or Pods forever. Every request that names a sandbox (create,
 * get, any command-API call) counts as use; a command still running keeps
 * its sandbox however long it takes. A sandbox this process has not seen
 * yet (created before a restart) gets a full timeout from the first sweep
 * that lists it, so a restart never deletes sandboxes in use at once.
 */
export class IdleExpiry {
  readonly idleTimeoutMs: number;
  private readonly now: () => number;
  private readonly lastSeen = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<string[]>;
  private readonly expiredListeners: Array<(sandboxId: string) => void> = [];

  constructor(private readonly options: IdleExpiryOptions) {
    this.idleTimeoutMs = Math.max(0, options.idleTimeoutMs);
    this.now = options.now ?? Date.now;
  }

  /** Call `listener` after a sandbox was deleted for idleness (the app drops its caches of it). */
  onExpired(listener: (sandboxId: string) => void): void {
    this.expiredListeners.push(listener);
  }

  /** A request reached the sandbox. */
  touch(sandboxId: string): void {
    this.lastSeen.set(sandboxId, this.now());
  }

  /** A request to the sandbox's command API started (kept alive until {@link end}). */
  begin(sandboxId: string): void {
    this.inFlight.set(sandboxId, (this.inFlight.get(sandboxId) ?? 0) + 1);
    this.touch(sandboxId);
  }

  /** That request ended (its end counts as use too: the timeout runs from here). */
  end(sandboxId: string): void {
    const n = (this.inFlight.get(sandboxId) ?? 1) - 1;
    if (n > 0) this.inFlight.set(sandboxId, n);
    else this.inFlight.delete(sandboxId);
    this.touch(sandboxId);
  }

  /** The sandbox was deleted by its caller. */
  forget(sandboxId: string): void {
    this.lastSeen.delete(sandboxId);
  }

  /** Period of the timer started by {@link start}. */
  get sweepIntervalMs(): number {
    return this.options.sweepIntervalMs ?? Math.min(MAX_EXPIRY_SWEEP_MS, Math.max(1000, this.idleTimeoutMs / 4));
  }

  /** Sweep on a timer (unref'd: it never keeps the process alive); nothing with a timeout of 0. */
  start(): void {
    if (this.idleTimeoutMs === 0 || this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.sweepIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Delete every listed sandbox idle for the timeout or longer; resolves to their ids. One sweep at a time. */
  sweep(): Promise<string[]> {
    if (this.idleTimeoutMs === 0) return Promise.resolve([]);
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<string[]> {
    const log = this.options.log ?? (() => {});
    let listed;
    try {
      listed = await this.options.backend.list();
    } catch (err) {
      log(`idle sweep could not list sandboxes: ${(err as Error).message}`);
      return [];
    }
    const now = this.now();
    const present = new Set(listed.map((s) => s.sandboxId));
    for (const id of this.lastSeen.keys()) if (!present.has(id) && !this.inFlight.has(id)) this.lastSeen.delete(id);
    const expired: string[] = [];
    for (const { sandboxId } of listed) {
      const seen = this.lastSeen.get(sandboxId);
      if (seen === undefined) {
        this.lastSeen.set(sandboxId, now);
        continue;
      }
      // (Read after the removals awaited above: a request in between counts.)
      if (this.inFlight.has(sandboxId) || now - seen < this.idleTimeoutMs) continue;
      try {
        await this.options.backend.remove(sandboxId);
      } catch (err) {
        log(`idle sweep could not delete sandbox ${sandboxId}: ${(err as Error).message}`);
        continue;
      }
      this.lastSeen.delete(sandboxId);
      for (const listener of this.expiredListeners) listener(sandboxId);
      expired.push(sandboxId);
      log(`sandbox ${sandboxId} deleted: no request for ${Math.round((now - seen) / 1000)} s (idle timeout ${Math.round(this.idleTimeoutMs / 1000)} s)`);
    }
    return expired;
  }
}
