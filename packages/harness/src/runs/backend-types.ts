/**
 * The interfaces a run service runs on. Each has an in-memory
 * implementation (one process), a SQLite one (one data dir) and a shared
 * one (PostgreSQL for locks and leases, Redis for streams and signals), so
 * several server processes can accept, execute, join and cancel one
 * another's runs.
 */

/** Who holds a thread's run slot, and until when (epoch ms). */
export interface RunLockHolder {
  runId: string;
  /** The owning process (see {@link RunBackends.ownerId}). */
  owner: string;
  expiresAt: number;
}

/**
 * One active run per thread, across every process on the same backend. A
 * holder that stops renewing loses the slot once `expiresAt` passed.
 */
export interface RunLock {
  /** Make `runId` the thread's active run when the slot is free, expired, or already its own. True when it holds the slot now. */
  acquire(threadId: string, runId: string, owner: string, expiresAt: number, now: number): Promise<boolean>;
  /** Extend the holder's slot; false when `runId`/`owner` no longer holds it. */
  renew(threadId: string, runId: string, owner: string, expiresAt: number): Promise<boolean>;
  /** Free the slot if `runId` holds it (no-op otherwise). */
  release(threadId: string, runId: string): Promise<void>;
  /** The current holder (expired holders included: the caller compares `expiresAt`). */
  holder(threadId: string): Promise<RunLockHolder | undefined>;
}

/** A run's execution lease (who executes it, until when; epoch ms). */
export interface RunLease {
  runId: string;
  threadId: string;
  owner: string;
  expiresAt: number;
}

/**
 * Execution leases of runs: the process that executes a run holds its lease
 * and renews it (heartbeats); a lease that expired (plus grace) is taken over
 * by another process, which resumes the run from its last checkpoint.
 */
export interface RunLeases {
  /** Take the lease when it is free, expired before `now`, or already `owner`'s. True when taken. */
  acquire(runId: string, threadId: string, owner: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * Take the lease as {@link acquire} does and return its new epoch (the
   * fencing token), or undefined when refused. Every successful claim gets
   * an epoch above every earlier claim of the run, so a write carrying an
   * older epoch comes from an owner that lost the lease. Renewals keep the
   * epoch. Optional: leases without it fence nothing.
   */
  claim?(runId: string, threadId: string, owner: string, expiresAt: number, now: number): Promise<number | undefined>;
  /** Extend `owner`'s lease; false when another owner took it over. */
  renew(runId: string, owner: string, expiresAt: number): Promise<boolean>;
  /** Drop `owner`'s lease (the run ended). */
  release(runId: string, owner: string): Promise<void>;
  /** Leases that expired before `before` (epoch ms), oldest first. */
  expired(before: number, limit: number): Promise<RunLease[]>;
  get(runId: string): Promise<RunLease | undefined>;
}

/** The `gap` payload when a requested event id is older than what is retained. */
export interface StreamGap {
  code: "stream_replay_gap";
  run_id: string;
  requested_event_id: string | null;
  earliest_available_event_id: string | null;
  latest_available_event_id: string | null;
  recovery: "reload_durable_state";
}

/** What a stream subscriber receives, in order; nothing follows `end` or `gap`. */
export type StreamItem =
  | { kind: "event"; id: string; event: string; data: unknown }
  | { kind: "gap"; data: StreamGap }
  | { kind: "end" };

/** A push subscriber: called synchronously for local events, from the backend's reader otherwise. */
export interface StreamListener {
  (item: StreamItem): void;
  /**
   * Optional: told when the run's writer in this process starts (`true`) and
   * ends (`false`) a hold (see {@link RunStreamWriter.durableWait}). A subscriber
   * that groups its output into network writes (an SSE response) may keep
   * what it has not sent yet until the hold ends.
   */
  onHold?(held: boolean): void;
}

/** Writes one run's stream (only the run's owner writes it). */
export interface RunStreamWriter {
  /**
   * Append an event and return its id at once. Ids are `{epochMs}-{seq}`,
   * strictly increasing per run, and are the backend's own entry ids (a
   * Redis stream entry id), so `Last-Event-ID` resumes on any process.
   * Subscribers in this process get the event synchronously.
   */
  publish(event: string, data: unknown): string;
  /** Append the end marker and flush; subscribers then get `end`. */
  end(): Promise<void>;
  /** Settles when everything published so far is stored; rejects when the backend failed. */
  flush(): Promise<void>;
  /**
   * Stop as a writer that lost its run to another process, storing nothing
   * more: what is pending or not yet confirmed is dropped, and this
   * process's subscribers get an `error` event carrying the id of the last
   * entry the backend confirmed (a client resuming from it, on any process,
   * gets the new owner's events from there), then `end`. Optional: a
   * single-process bridge has no other owner.
   */
  abandon?(message: string): void;
  /**
   * Called with `true` when the run starts waiting for its checkpoint writes
   * to be durable before it goes on (a tool with side effects, its end), and
   * with `false` when the wait is over: what it publishes right after the
   * wait follows what it published right before, so this process's
   * subscribers may hold what they have not sent yet and send both in one
   * network write (see {@link StreamListener.onHold}). Events are still
   * delivered at once. Optional: a writer without it takes no holds.
   */
  durableWait?(waiting: boolean): void;
}

/** How a run's stream writer is opened. */
export interface StreamWriterOptions {
  /** Continue after the entries already stored (a takeover). */
  resume?: boolean;
  /**
   * The epoch of the writer's lease claim, read on each write (a queued
   * run gets its claim after its writer opened). A backend shared by
   * processes refuses writes from a lower epoch than the highest it saw,
   * and a resumed writer raises that epoch when it opens, so an owner
   * replaced by a takeover can append nothing after it. Undefined: the
   * writer is fenced by the stream's top entry only.
   */
  epoch?: () => number | undefined;
}

/**
 * The stream bridge: one append-only, capped (`queue_maxsize`), expiring
 * (`stream_ttl_seconds`) event stream per run, replayable by event id.
 */
export interface StreamBridge {
  readonly kind: "memory" | "sqlite" | "redis";
  /** Start writing a run's stream; with `resume`, continue after the entries already stored (a takeover). */
  writer(runId: string, options?: StreamWriterOptions): Promise<RunStreamWriter>;
  /**
   * Subscribe after `lastEventId` (null or unparsable: from the oldest
   * retained entry). An id older than the retained window yields one `gap`.
   * Returns a function that stops the subscription.
   */
  subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void;
  /** True when the run's stream has entries (or its end marker) retained. */
  has(runId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Messages between processes about runs. */
export type RunSignal =
  | { type: "cancel"; runId: string; action: "interrupt" | "rollback" }
  /** A thread's run slot was released: a process with a queued run for it may start it. */
  | { type: "thread_released"; threadId: string };

/** Pub/sub of {@link RunSignal}s (in-process, or Redis pub/sub across processes). */
export interface RunSignals {
  publish(signal: RunSignal): Promise<void>;
  subscribe(listener: (signal: RunSignal) => void): () => void;
  close(): Promise<void>;
}

/** `run_ownership:` as the run service uses it (milliseconds). */
export interface RunOwnershipSettings {
  leaseMs: number;
  graceMs: number;
  heartbeat: boolean;
}

/** The backends of one process's run service. */
export interface RunBackends {
  /** This process's id as a lease owner (unique per process start). */
  readonly ownerId: string;
  /** True when several processes share runs over these backends (PostgreSQL leases and lock, Redis bridge and signals). */
  readonly shared: boolean;
  readonly lock: RunLock;
  readonly leases: RunLeases;
  readonly bridge: StreamBridge;
  readonly signals: RunSignals;
  readonly ownership: RunOwnershipSettings;
  close(): Promise<void>;
}
