import { randomUUID } from "node:crypto";
import { errorMessage, RunCancelledError, RunServiceError } from "../errors";
import type { RunRecord } from "../persistence";
import type { RunResult } from "../runtime";
import { abandonRun, SECRETS_NOT_RESUMABLE } from "./abandon-run";
import type { RunBackends, RunSignal, RunStreamWriter, StreamBridge, StreamListener } from "./backend-types";
import { createMemoryStreamBridge } from "./bridge";
import { cancelElsewhere, claimForResume, notResumable, releaseThreadSlot, reserveNewRun, waitElsewhere } from "./cross-process";
import type { CrossProcessContext } from "./cross-process";
import { executeRun } from "./execute-run";
import { runLeaseKeeper } from "./lease-keeper";
import type { LeaseKeeper } from "./lease-keeper";
import { createLocalRun, SILENT_WRITER, TERMINAL } from "./local-run";
import type { LocalRun } from "./local-run";
import { endUnstored, notCancellable, refuseLateCancel } from "./run-end";
import type { RunHost, RunPolicy, RunServiceOptions } from "./run-host";
import { newRunRecord, resumeRequest } from "./run-record";
import { rollbackRunOf } from "./run-rollback";
import { RunQueues } from "./run-queues";
import { finishRun } from "./run-finish";
import { openEndOnlyWriter, openRunWriter } from "./run-writer";
import { SlotWaiter } from "./slot-waiter";
import type { CancelAction, RunHandle, RunRequest } from "./run-types";

/**
 * The run lifecycle, for the gateway and the embedded client alike: create
 * and start (one active run per thread, the multitask strategies reject /
 * interrupt / rollback / enqueue), stream from an event id, cancel with
 * interrupt or rollback, wait, list, and resume a run whose process died.
 *
 * One process executes a run: the one that accepted it (or resumed it). Its
 * events go to the stream bridge (any process can follow them), its record
 * and transcript to the stores through the run recorder. On shared backends
 * the thread's slot is a {@link RunLock} across processes, the executing
 * process holds the run's lease and renews it, and cancels and freed slots
 * travel as {@link RunSignal}s. On one process's backends the slot is kept
 * in memory only: no lock or lease round trip per run.
 */
export class RunService {
  private readonly host: RunHost;
  private readonly backends: RunBackends;
  private readonly log: (message: string) => void;
  private readonly clock: () => number;
  private policy: RunPolicy = {};
  /** Runs this process executes or has queued, until they ended. */
  private readonly live = new Map<string, LocalRun>();
  private readonly active = new Map<string, LocalRun>();
  private readonly queues = new RunQueues();
  /** Threads whose slot across processes is being taken by a request (shared backends). */
  private readonly reserving = new Set<string>();
  private readonly slots: SlotWaiter;
  private readonly unsubscribe: () => void;
  private closed = false;
  /** The stream bridge runs publish to (the backends', or the service's own in-memory one, see {@link RunPolicy.memoryReplay}). */
  private bridge: StreamBridge;
  private ownBridge: StreamBridge | undefined;

  constructor(options: RunServiceOptions) {
    this.host = options.host;
    this.backends = options.backends;
    this.bridge = options.backends.bridge;
    this.log = options.log;
    this.clock = options.clock ?? Date.now;
    this.slots = new SlotWaiter(this.backends, this.clock);
    this.unsubscribe = this.backends.signals.subscribe((signal) => this.onSignal(signal));
  }

  /** True when runs are shared with other processes (PostgreSQL lock and leases, Redis bridge). */
  get shared(): boolean {
    return this.backends.shared;
  }

  /** This process's lease owner id. */
  get ownerId(): string {
    return this.backends.ownerId;
  }

  /** The backends the service runs on. */
  get runBackends(): RunBackends {
    return this.backends;
  }

  /** Set how runs are presented (event payloads, error texts, timeout). Applies to runs created afterwards. */
  configure(policy: RunPolicy): void {
    this.policy = { ...this.policy, ...policy };
    const replay = policy.memoryReplay;
    // Swapped only while no run publishes: a run's stream stays on the bridge it started on.
    if (replay && this.backends.bridge.kind === "memory" && !this.backends.shared && this.live.size === 0) {
      const previous = this.ownBridge;
      this.ownBridge = createMemoryStreamBridge(replay);
      this.bridge = this.ownBridge;
      void previous?.close();
    }
  }

  private prefix(): string {
    return this.policy.logPrefix ?? "[runs]";
  }

  /** A run this process executes or has queued (undefined once it ended). */
  get(runId: string): RunHandle | undefined {
    return this.live.get(runId);
  }

  /** True while the thread has an active or queued run in this process (see {@link isThreadBusy} for every process). */
  hasWorkInFlight(threadId: string): boolean {
    return this.active.has(threadId) || this.reserving.has(threadId) || this.queues.size(threadId) > 0;
  }

  /**
   * True while the thread has a run in flight in any process sharing the
   * backends: here, or a run of another process holding the thread's slot
   * (its run lock, not expired). On one process's backends this is
   * {@link hasWorkInFlight}, answered from memory. Throws `run_backend_failed`
   * when the lock cannot be read.
   */
  async isThreadBusy(threadId: string): Promise<boolean> {
    if (this.hasWorkInFlight(threadId)) return true;
    if (!this.backends.shared) return false;
    const holder = await this.backends.lock.holder(threadId).catch((err: unknown) => {
      throw new RunServiceError("run_backend_failed", `The run lock is unavailable: ${errorMessage(err)}`, { cause: err });
    });
    return holder !== undefined && holder.expiresAt > this.clock();
  }

  /** Runs of a thread, newest first (the stored records). */
  list(threadId: string): Promise<RunRecord[]> {
    return this.host.stores.runs.listByThread(threadId);
  }

  /**
   * Create a run and start it, or queue it behind the thread's active run.
   * Throws a {@link RunServiceError} `run_conflict` under `reject` when the
   * thread is busy, `checkpoint_not_found` for an unknown `checkpointId`.
   * With `waitForStore: false` it returns as soon as the thread is reserved
   * (a streaming response can start at once); a store failure then reaches
   * the stream as `error` + `end`.
   */
  async create(request: RunRequest, options: { waitForStore?: boolean } = {}): Promise<RunHandle> {
    if (this.closed) throw new RunServiceError("run_service_closed", "Server is shutting down");
    const { threadId } = request;
    const runId = request.runId ?? randomUUID();
    if (request.checkpointId) {
      const snap = await this.host.readState(threadId, request.checkpointId).catch(() => undefined);
      if (!snap) throw new RunServiceError("checkpoint_not_found", `Checkpoint ${request.checkpointId} not found in thread ${threadId}`);
    }
    const strategy = request.strategy ?? "reject";
    if (this.hasWorkInFlight(threadId)) {
      if (strategy === "reject") throw conflict(threadId);
      if (strategy === "interrupt" || strategy === "rollback") {
        const victims = [...this.queues.of(threadId), ...(this.active.has(threadId) ? [this.active.get(threadId)!] : [])];
        await Promise.all(victims.map((v) => this.cancelLocal(v, strategy, true)));
      }
    }
    // Decide and reserve the thread synchronously: no await between the busy check and the reservation,
    // so two requests racing on one thread cannot both become active here.
    if (strategy === "reject" && this.hasWorkInFlight(threadId)) throw conflict(threadId);
    const startsNow = !this.active.has(threadId) && !this.reserving.has(threadId);
    let remoteWait = false;
    let leased: { epoch: number | undefined } | undefined;
    if (this.backends.shared && startsNow) {
      // The slot across processes and the run's lease, before anything is written: a refused request leaves no record,
      // a stored one has a lease the takeover finds. Meanwhile the thread is busy here: local requests queue behind.
      this.reserving.add(threadId);
      try {
        ({ remoteWait, leased } = await reserveNewRun(threadId, runId, strategy, this.crossProcess()));
      } catch (err) {
        this.reserving.delete(threadId);
        if (!this.active.has(threadId)) this.startNext(threadId);
        if (err instanceof RunServiceError) throw err;
        throw new RunServiceError("run_backend_failed", `The run lock or lease is unavailable: ${errorMessage(err)}`, { cause: err });
      }
      this.reserving.delete(threadId);
    }
    const context = { ...request.context, thread_id: threadId, run_id: runId, user_id: request.userId };
    const record = newRunRecord(request, runId, context, strategy, startsNow && !remoteWait);
    const begin = () => this.host.recorder.begin(record, request.createThread ? { createThread: request.createThread } : {});
    // A run queued on shared backends holds its lease too, taken before its record is written (as a new run's is):
    // a stored record always has a lease the takeover finds if this process dies, and the run starts in its turn.
    const leaseFirst = this.backends.shared && !startsNow;
    let afterLease: ((held: Promise<void>) => void) | undefined;
    // Otherwise both writes are queued now, before anything the run writes, and commit with the next group commit.
    const stored = leaseFirst ? new Promise<void>((resolve) => (afterLease = (held) => resolve(held.then(begin)))) : begin();
    // On shared backends its `metadata` event (its id, to readers) waits for its record: other processes then find it;
    // its appends carry its lease epoch, read per batch (a queued run claims its lease after its writer opened).
    let created: LocalRun | undefined;
    const epoch = () => created?.leaseEpoch;
    const writer =
      request.stream === false
        ? this.backends.shared
          ? openEndOnlyWriter(this.bridge, runId, epoch)
          : Promise.resolve(SILENT_WRITER)
        : openRunWriter(this.bridge, { runId, threadId }, false, epoch, this.backends.shared ? stored : undefined);
    const run = (created = this.newRun({ ...request, runId, context, strategy }, record, { stored, writer, resumed: false }));
    run.remoteWait = remoteWait;
    run.holdsLease = leased !== undefined;
    run.leaseEpoch = leased?.epoch;
    if (startsNow) this.active.set(threadId, run);
    else this.queues.push(run);
    if (leaseFirst) {
      run.lease = this.leaseFor(run);
      afterLease!(
        run.lease.hold().catch((err: unknown) => {
          throw new RunServiceError("run_backend_failed", `Could not take the lease of queued run ${runId}: ${errorMessage(err)}`, { cause: err });
        }),
      );
    }
    run.stored.catch((err: unknown) => this.storeFailed(run, err));
    if (startsNow) this.start(run);
    // A failed store is reported in the run's stream (error, then end); a caller that waits for it gets the error.
    if (options.waitForStore !== false) await run.stored;
    return run;
  }

  /**
   * Execute again a run whose owner died, under this process's lease (a new
   * epoch: the old owner's later checkpoint writes are refused), on the same
   * event stream. A run that was executing goes on from its thread's last
   * checkpoint (input null; dangling tool calls are patched) ahead of the
   * runs queued here; a queued one (or one that died before committing its
   * input) starts from its stored input in its turn. Throws (see
   * {@link claimForResume}) `run_not_resumable` or `run_secrets_not_resumable`;
   * the caller then ends the run with {@link abandon}.
   */
  async resume(runId: string): Promise<RunHandle> {
    if (this.closed) throw notResumable(runId, "the server is shutting down");
    if (this.live.has(runId)) throw notResumable(runId, "it is executing in this process");
    const { record, execution, epoch } = await claimForResume(runId, this.crossProcess());
    const queued = record.status === "pending";
    // A run whose owner died before its input checkpoint committed starts over from its stored input.
    const replay = queued || (execution.input !== undefined && (await this.host.readState(record.threadId).catch(() => undefined))?.metadata.run_id !== runId);
    const run = this.newRun(resumeRequest(record, execution, replay), { ...record, status: queued ? "pending" : "running" }, {
      stored: Promise.resolve(),
      writer: openRunWriter(this.bridge, { runId, threadId: record.threadId }, true, () => epoch),
      resumed: true,
    });
    run.holdsLease = true;
    run.leaseEpoch = epoch;
    this.log(`${this.prefix()} ${queued ? "taking over queued" : "resuming"} run ${runId} of thread ${record.threadId}`);
    if (queued) {
      // Its lease is renewed while it waits, so no other process takes it over a second time.
      run.lease = this.leaseFor(run);
      await run.lease.hold();
      if (this.hasWorkInFlight(record.threadId)) this.queues.insertByAge(run);
      else this.start(run);
      return run;
    }
    const displaced = this.active.get(record.threadId);
    if (displaced) {
      // The resumed run goes first. On shared backends the displaced run may already be executing here, waiting
      // for the thread's slot the dead owner held: it keeps waiting (now for the resumed run's release), and
      // start() does not execute it a second time when the queue hands it the thread.
      this.queues.push(displaced);
      this.active.delete(record.threadId);
    }
    this.active.set(record.threadId, run);
    this.start(run);
    return run;
  }

  /**
   * Follow a run's stream after `lastEventId` (from any process on shared
   * backends). Returns a function that stops the subscription.
   */
  subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
    return this.bridge.subscribe(runId, lastEventId, listener);
  }

  /**
   * True when a client joining the run has a stream to follow: the run is
   * live here, or its stream is retained in the bridge, or (shared backends)
   * its record says it has not ended. Another process's run may have shown
   * its first event to its own clients before that event reached the
   * bridge (and a stored record comes before any event), so a missing stream
   * does not mean an ended one: the subscription waits for its entries. The
   * record is read first: on shared backends an owner stores everything but
   * the end marker before its record says it ended, so an ended run without
   * a stream is one whose stream expired (or that streamed nothing).
   * `record` is one the caller just read.
   */
  async hasStream(runId: string, record?: Pick<RunRecord, "status">): Promise<boolean> {
    if (this.live.has(runId)) return true;
    if (this.backends.shared) {
      const rec = record ?? (await this.host.stores.runs.get(runId));
      if (rec && !TERMINAL.has(rec.status)) return true;
    }
    return this.bridge.has(runId);
  }

  /**
   * Wait until a run ended and return its stored record: a local run's
   * `done`, otherwise its stream until `end` (a run in another process).
   */
  async wait(runId: string): Promise<RunRecord | undefined> {
    const local = this.live.get(runId);
    if (!local) return waitElsewhere(runId, this.crossProcess());
    await local.done;
    return this.host.stores.runs.get(runId);
  }

  /**
   * Cancel a run. `run_not_found` when unknown, `run_not_cancellable` when
   * already finished, `run_not_active_here` when it executes in a process
   * this one cannot signal. With `wait`, resolves once the run stopped.
   */
  async cancel(runId: string, action: CancelAction, wait: boolean): Promise<void> {
    const run = this.live.get(runId);
    // An ending run is refused as a finished one, with the status it ends with; a waited cancel, if the run ended on its own.
    if (run?.ending) throw notCancellable(runId, (await run.done).status);
    if (run) await this.cancelLocal(run, action, wait);
    else if (!(await cancelElsewhere(runId, action, this.crossProcess()))) return;
    if (wait) refuseLateCancel(runId, run ? await run.done : await this.wait(runId));
  }

  private async cancelLocal(run: LocalRun, action: CancelAction, wait: boolean): Promise<void> {
    if (TERMINAL.has(run.status)) throw notCancellable(run.runId, run.status);
    run.cancelAction ??= action;
    if (!run.started) {
      this.queues.remove(run);
      await this.finish(run, undefined, undefined);
    } else {
      run.controller.abort(new RunCancelledError(action));
    }
    if (wait) await run.done;
  }

  private onSignal(signal: RunSignal): void {
    if (signal.type === "cancel") {
      const run = this.live.get(signal.runId);
      if (run && !TERMINAL.has(run.status)) void this.cancelLocal(run, signal.action, false).catch(() => undefined);
    } else {
      this.slots.released(signal.threadId);
    }
  }

  /** Interrupt every run this process executes or queued, and wait until they settled. */
  async interruptAll(): Promise<void> {
    const pending = [...this.live.values()].filter((r) => !TERMINAL.has(r.status));
    await Promise.all(pending.map((r) => this.cancelLocal(r, "interrupt", true).catch(() => undefined)));
  }

  /** Stop accepting runs, interrupt everything in flight and wait for it to settle. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.interruptAll();
    this.slots.close();
    this.unsubscribe();
    await this.ownBridge?.close();
  }

  // ── internals ──

  private newRun(request: RunRequest, record: RunRecord, parts: { stored: Promise<void>; writer: Promise<RunStreamWriter>; resumed: boolean }): LocalRun {
    const run = createLocalRun(request, record, parts, this.bridge);
    this.live.set(record.runId, run);
    // A writer that cannot open (the bridge is down) fails the run; it never leaves it running.
    parts.writer.catch((err: unknown) => {
      this.log(`${this.prefix()} the event stream of run ${record.runId} is unavailable: ${errorMessage(err)}`);
      if (!run.started && !TERMINAL.has(run.status)) {
        this.dropQueued(run);
        void this.finish(run, undefined, err);
      } else run.controller.abort(new RunCancelledError("stream"));
    });
    const signal = request.signal;
    if (signal) {
      const onAbort = () => void this.cancelLocal(run, "interrupt", false).catch(() => undefined);
      if (signal.aborted) queueMicrotask(onAbort);
      else signal.addEventListener("abort", onAbort, { once: true });
      void run.done.then(() => signal.removeEventListener("abort", onAbort));
    }
    return run;
  }

  private dropQueued(run: LocalRun): void {
    this.queues.remove(run);
    if (this.active.get(run.threadId) === run) this.active.delete(run.threadId);
  }

  /**
   * The run's record could not be stored. A run that is executing is stopped
   * ({@link finish} rolls back what it wrote and ends its stream with an
   * error); a queued one is dropped from its queue.
   */
  private storeFailed(run: LocalRun, err: unknown): void {
    this.log(`${this.prefix()} could not store run ${run.runId}: ${errorMessage(err)}`);
    if (TERMINAL.has(run.status)) return;
    if (run.started) {
      run.controller.abort(new RunCancelledError("store"));
      return;
    }
    const { threadId, runId } = run;
    this.live.delete(runId);
    // (a queued run's lease, taken before its record: nothing is left for a takeover to find)
    run.lease?.stop();
    if (run.holdsLease) void this.backends.leases.release(runId, this.ownerId).catch(() => undefined);
    if (this.active.get(threadId) === run) {
      this.active.delete(threadId);
      this.startNext(threadId);
    } else this.dropQueued(run);
    endUnstored(run);
  }

  /** The keeper of a run's lease: a refused renewal stops the run here, a failed stream ends it as error. */
  private leaseFor(run: LocalRun): LeaseKeeper {
    return runLeaseKeeper(run, this.backends, this.clock, (m) => this.log(`${this.prefix()} ${m}`), () => {
      // A queued run another process took over is its now: it leaves this process's queue without an end.
      if (!run.started) void this.finish(run, undefined, undefined);
    });
  }

  /** Make the run its thread's active run and execute it. */
  private start(run: LocalRun): void {
    this.active.set(run.threadId, run);
    // Starting is idempotent: a run that already executes (one a resume moved back into the queue while it
    // waited for the thread's slot) only becomes the thread's active run again; executing it twice would apply
    // its input twice.
    if (run.started) return;
    run.started = true;
    void this.execute(run);
  }

  private startNext(threadId: string): void {
    const next = this.queues.shift(threadId);
    if (next) this.start(next);
  }

  private async execute(run: LocalRun): Promise<void> {
    const log = (m: string) => this.log(`${this.prefix()} ${m}`);
    const { result, failure } = await executeRun(run, { host: this.host, backends: this.backends, slots: this.slots, policy: this.policy, leaseFor: (r) => this.leaseFor(r), log, clock: this.clock });
    await this.finish(run, result, failure);
  }

  private async finish(run: LocalRun, result: RunResult | undefined, failure: unknown): Promise<void> {
    if (TERMINAL.has(run.status) && !this.live.has(run.runId)) return;
    await finishRun(run, result, failure, {
      host: this.host,
      backends: this.backends,
      policy: this.policy,
      log: (m) => this.log(`${this.prefix()} ${m}`),
      isActive: (r) => this.active.get(r.threadId) === r,
      hasQueued: (threadId) => this.queues.head(threadId) !== undefined,
      release: (r, wasActive) => this.release(r, wasActive),
    });
  }

  /** Free the run's local slot (starting the next queued run), its lease and its slot across processes. */
  private release(run: LocalRun, wasActive: boolean): Promise<void> {
    this.live.delete(run.runId);
    if (wasActive) this.active.delete(run.threadId);
    else this.dropQueued(run);
    const { backends } = this;
    if (run.holdsLease) void backends.leases.release(run.runId, this.ownerId).catch(() => undefined);
    let freed = Promise.resolve();
    if (backends.shared && wasActive && !run.leaseLost) freed = releaseThreadSlot(run.threadId, run.runId, this.crossProcess());
    if (wasActive) this.startNext(run.threadId);
    return freed;
  }

  /**
   * End a run that cannot be resumed (its process died): `error` record and
   * thread with `message`, an `error` event and the end marker on its
   * stream, its lease and thread slot released. No-op for a run executing
   * here or already finished. `reason` (what refused the resume) picks the
   * stop reason: `secrets_not_resumable` or `resume_failed`.
   */
  async abandon(runId: string, message: string, reason?: unknown): Promise<void> {
    if (this.live.has(runId)) return;
    const secrets = (reason as { code?: unknown } | undefined)?.code === "run_secrets_not_resumable";
    await abandonRun(runId, message, this.crossProcess(), secrets ? SECRETS_NOT_RESUMABLE : undefined);
  }

  /** The service's parts as the cross-process steps take them. */
  private crossProcess(): CrossProcessContext {
    const log = (m: string) => this.log(`${this.prefix()} ${m}`);
    const rollbackRun = (threadId: string, runId: string) => rollbackRunOf(this.host, threadId, runId);
    return { stores: this.host.stores, backends: this.backends, bridge: this.bridge, slots: this.slots, clock: this.clock, log, rollbackRun };
  }
}

const conflict = (threadId: string): RunServiceError => new RunServiceError("run_conflict", `Thread ${threadId} already has an active run`);

