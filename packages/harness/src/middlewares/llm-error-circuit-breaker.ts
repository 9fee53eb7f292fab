/** Circuit breaker states. */
export type CircuitState = "closed" | "open" | "half_open";

/**
 * A consecutive-failure circuit breaker: opens after `failureThreshold`
 * failures for `recoveryTimeoutMs`, then lets exactly one probe through
 * (half-open). A successful probe closes it; a failed probe re-opens it.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private current: CircuitState = "closed";
  private probeInFlight = false;

  constructor(
    private readonly failureThreshold: number,
    private readonly recoveryTimeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Current state (an expired open circuit reports `half_open`). */
  get state(): CircuitState {
    if (this.current === "open" && this.now() >= this.openUntil) return "half_open";
    return this.current;
  }

  /** Consecutive failures counted so far. */
  get failureCount(): number {
    return this.failures;
  }

  /** True when the call must fast-fail. Otherwise the call may proceed (possibly as the half-open probe). */
  isOpen(): boolean {
    if (this.current === "open") {
      if (this.now() < this.openUntil) return true;
      this.current = "half_open";
      this.probeInFlight = false;
    }
    if (this.current === "half_open") {
      if (this.probeInFlight) return true;
      this.probeInFlight = true;
    }
    return false;
  }

  /** A call succeeded: close the circuit. */
  recordSuccess(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.current = "closed";
    this.probeInFlight = false;
  }

  /** A retriable failure exhausted its retries. */
  recordFailure(): void {
    if (this.current === "half_open") {
      this.openUntil = this.now() + this.recoveryTimeoutMs;
      this.current = "open";
      this.probeInFlight = false;
      return;
    }
    this.failures++;
    if (this.failures >= this.failureThreshold) {
      this.openUntil = this.now() + this.recoveryTimeoutMs;
      this.current = "open";
      this.probeInFlight = false;
    }
  }

  /** The half-open probe ended without a classified outcome (non-retriable error, interrupt): admit another. */
  releaseProbe(): void {
    if (this.current === "half_open") this.probeInFlight = false;
  }
}
