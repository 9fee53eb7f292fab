import { MessageCoalescer } from "./message-coalescer";
import { randomUUID } from "node:crypto";
import { Command, coerceMessage, DeerFlowError, emptyUsage, isoNow, readRuntimeOptions, RunCancelledError, TERMINAL_RUN_STATUSES, ValidationError } from "@deerflow/harness";
import type {
  Agent,
  DeerFlowRuntime,
  ModelEntry,
  MultitaskStrategy,
  PersistenceStores,
  RunInput,
  RunOptions,
  RunRecord,
  RunRecordStatus as RunStatus,
  RunResult,
  RunSettings,
  StreamMode,
} from "@deerflow/harness";
import { HttpError } from "../http-error";
import type { ResolvedGatewayOptions } from "../options";
import { RunEventBuffer } from "../sse/event-buffer";
import { agentNameFromAssistant, CONTEXT_WHITELIST, requestedModes } from "./run-request";
import type { ClientStreamMode, RunCreateRequest } from "./run-request";
import { redactSecrets } from "./run-response";
import { HostPathMasker, publicStreamData } from "../security";

/** How a cancel stops a run. */
export type CancelAction = "interrupt" | "rollback";

/** A run the manager knows in memory (active, queued, or finished but not reaped). */
export interface LiveRun {
  readonly runId: string;
  readonly threadId: string;
  readonly buffer: RunEventBuffer;
  readonly onDisconnect: "cancel" | "continue";
  /** Resolves when the run reached a terminal status. */
  readonly done: Promise<void>;
  /** Current status (mirrors the stored record). */
  status: RunStatus;
}

interface PreparedRun {
  input: RunInput;
  options: Omit<RunOptions, "signal">;
  /** The run's DeerFlow settings, parsed once here and passed unchanged to the agent factory. */
  settings: RunSettings;
  assistantId: string;
  modes: ClientStreamMode[];
  subgraphs: boolean;
}

interface InternalRun extends LiveRun {
  record: RunRecord;
  prepared: PreparedRun;
  controller: AbortController;
  cancelAction?: CancelAction;
  timedOut: boolean;
  started: boolean;
  /**
   * Settles once the run record is stored. The run does not wait for it (its
   * record and checkpoints commit in the order they were queued); if it
   * fails, the run is stopped and what it wrote is rolled back.
   */
  stored: Promise<void>;
  resolveDone: () => void;
}

const HARNESS_MODE: Record<ClientStreamMode, StreamMode> = {
  values: "values",
  "messages-tuple": "messages",
  updates: "updates",
  debug: "debug",
  tasks: "tasks",
  checkpoints: "checkpoints",
  custom: "custom",
};

const EVENT_NAME: Partial<Record<StreamMode, string>> = { messages: "messages" };

/** The stream's error when a run's record could not be stored. */
const STORE_FAILED = "Could not store the run";

/**
 * What DeerFlow puts in a run's config metadata, from the built agent: it
 * reaches every `messages` event and checkpoint (`agent_name` is `default`
 * for the lead agent, as DeerFlow writes it).
 */
function agentRunMetadata(agent: Agent): Record<string, unknown> {
  const meta = (agent as { metadata?: Record<string, unknown> }).metadata;
  if (!meta) return {};
  return { ls_integration: "langchain_create_agent", available_skills: null, ...meta, agent_name: meta.agent_name ?? "default" };
}

/**
 * Owns run execution: one active run per thread, multitask strategies,
 * cancellation, the per-run replay buffers, and run/thread bookkeeping.
 */
export class RunManager {
  private readonly live = new Map<string, InternalRun>();
  private readonly active = new Map<string, InternalRun>();
  private readonly queues = new Map<string, InternalRun[]>();
  private readonly reapTimers = new Set<ReturnType<typeof setTimeout>>();
  private closed = false;

  private readonly stores: PersistenceStores;
  /** Rewrites host paths under the data dir in run errors (they reach clients). */
  private readonly hostPaths: HostPathMasker;

  constructor(
    private readonly runtime: DeerFlowRuntime,
    private readonly options: ResolvedGatewayOptions,
  ) {
    this.stores = runtime.stores;
    this.hostPaths = new HostPathMasker([options.dataDir, options.baseDir]);
  }

  /** The configured models now (the runtime's config follows edits of config.yaml). */
  private models(): ModelEntry[] {
    const config = this.runtime.config();
    return config ? (config.models as ModelEntry[]) : this.options.models;
  }

  /** The in-memory run (with its replay buffer), if not reaped yet. */
  getLive(runId: string): LiveRun | undefined {
    return this.live.get(runId);
  }

  /** True while the thread has an active or queued run. */
  hasWorkInFlight(threadId: string): boolean {
    return this.active.has(threadId) || (this.queues.get(threadId)?.length ?? 0) > 0;
  }

  /**
   * Validate a run request and build what the agent needs. `userId` is the
   * caller's id: the run's files, memory, agents, skills and sessions are
   * that user's. Throws HttpError on client mistakes.
   */
  prepare(threadId: string, runId: string, userId: string, req: RunCreateRequest): PreparedRun {
    const modes = requestedModes(req);
    const agentName = agentNameFromAssistant(req.assistant_id);
    if (agentName === null) {
      throw new HttpError(422, `Invalid assistant_id '${req.assistant_id}': agent names must match [a-z0-9-]+`);
    }
    const configurable: Record<string, unknown> = { ...(req.config?.configurable ?? {}) };
    const source: Record<string, unknown> = { ...(req.context ?? {}), ...(req.config?.context ?? {}) };
    const context: Record<string, unknown> = {};
    for (const key of CONTEXT_WHITELIST) {
      if (source[key] !== undefined) context[key] = source[key];
    }
    if (agentName) context.agent_name = agentName;
    const modelName = context.model_name;
    const models = this.models();
    if (modelName !== undefined && models.length) {
      const known = models.some((m) => m.name === modelName);
      if (!known) throw new HttpError(400, `Model '${String(modelName)}' is not in the configured model allowlist`);
    }
    Object.assign(configurable, context, { thread_id: threadId });
    // The run's identity is the server's: the caller (signed-in user) and ids it assigned, never the request's.
    delete configurable.user_id;
    delete configurable.run_id;
    Object.assign(context, { thread_id: threadId, run_id: runId, user_id: userId });
    // Request-scoped skill secrets (`required-secrets`) go to the run context only: never configurable or metadata.
    if (source.secrets && typeof source.secrets === "object" && !Array.isArray(source.secrets)) context.secrets = source.secrets;
    let settings: RunSettings;
    try {
      settings = readRuntimeOptions(configurable, context);
    } catch (err) {
      if (err instanceof ValidationError) throw new HttpError(422, err.message);
      throw err;
    }

    let input: RunInput = null;
    if (req.command && req.command.resume !== undefined) {
      input = new Command({ resume: req.command.resume });
    } else if (req.input) {
      const messages = req.input.messages;
      if (messages !== undefined) {
        if (!Array.isArray(messages)) throw new HttpError(400, "Invalid message at input.messages: expected a list");
        messages.forEach((m, i) => {
          try {
            coerceMessage(m, `input.messages[${i}]`);
          } catch (err) {
            throw new HttpError(400, err instanceof ValidationError ? err.message : `Invalid message at input.messages[${i}]`);
          }
        });
      }
      input = { ...req.input };
    }
    const recursionLimit = Math.min(Math.max(1, req.config?.recursion_limit ?? 100), this.options.maxRecursionLimit);
    const checkpointId = req.checkpoint?.checkpoint_id ?? req.checkpoint_id ?? undefined;
    return {
      input,
      modes,
      subgraphs: req.stream_subgraphs === true,
      settings,
      assistantId: req.assistant_id ?? "lead_agent",
      options: {
        threadId,
        runId,
        checkpointId,
        context,
        configurable,
        metadata: { ...(req.metadata ?? {}) },
        recursionLimit,
        streamMode: modes.map((m) => HARNESS_MODE[m]),
      },
    };
  }

  /**
   * Create a run on an existing thread and start (or queue) it.
   * Throws 409 under `reject` when the thread is busy. With
   * `waitForStore: false` it returns as soon as the thread is reserved (a
   * streaming response can start at once); the run starts once its record
   * is stored, and a store failure reaches the stream as `error` + `end`.
   */
  async create(threadId: string, req: RunCreateRequest, userId: string, options: { waitForStore?: boolean } = {}): Promise<LiveRun> {
    if (this.closed) throw new HttpError(503, "Server is shutting down");
    const runId = randomUUID();
    const prepared = this.prepare(threadId, runId, userId, req);
    if (prepared.options.checkpointId) {
      const snap = await this.runtime.readState(threadId, prepared.options.checkpointId).catch(() => undefined);
      if (!snap) throw new HttpError(404, `Checkpoint ${prepared.options.checkpointId} not found in thread ${threadId}`);
    }
    const strategy: MultitaskStrategy = req.multitask_strategy ?? "reject";
    if (this.hasWorkInFlight(threadId)) {
      if (strategy === "reject") throw new HttpError(409, `Thread ${threadId} already has an active run`);
      if (strategy === "interrupt" || strategy === "rollback") {
        const victims = [...(this.queues.get(threadId) ?? []), ...(this.active.has(threadId) ? [this.active.get(threadId)!] : [])];
        await Promise.all(victims.map((v) => this.cancel(v.runId, strategy, true)));
      }
    }
    // Decide and reserve the thread synchronously: no await between the busy check and the reservation,
    // so two requests racing on one thread cannot both become active.
    if (strategy === "reject" && this.hasWorkInFlight(threadId)) throw new HttpError(409, `Thread ${threadId} already has an active run`);
    const startsNow = !this.active.has(threadId);
    const ts = isoNow();
    const record: RunRecord = {
      runId,
      threadId,
      userId,
      assistantId: req.assistant_id ?? "lead_agent",
      // A run that starts right away is stored as running (one write instead of pending → running).
      status: startsNow ? "running" : "pending",
      metadata: { ...(req.metadata ?? {}) },
      kwargs: redactSecrets({ input: req.input ?? null, command: req.command ?? null, config: req.config ?? {}, context: req.context ?? {} }) as Record<string, unknown>,
      multitaskStrategy: strategy,
      createdAt: ts,
      updatedAt: ts,
      usage: emptyUsage(),
      stopReason: null,
      error: null,
      modelName: prepared.settings.modelName ?? null,
    };
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const run: InternalRun = {
      runId,
      threadId,
      buffer: new RunEventBuffer(runId, this.options.replayBufferSize),
      onDisconnect: req.on_disconnect ?? "cancel",
      done,
      status: record.status,
      record,
      prepared,
      controller: new AbortController(),
      timedOut: false,
      started: false,
      // Both writes are queued now, before anything the run writes, and commit with the next group commit.
      stored: this.runtime.recorder.begin(record),
      resolveDone,
    };
    run.buffer.publish("metadata", { run_id: runId, thread_id: threadId });
    this.live.set(runId, run);
    if (startsNow) {
      this.start(run);
    } else {
      const q = this.queues.get(threadId) ?? [];
      q.push(run);
      this.queues.set(threadId, q);
    }
    const persisted = run.stored.catch((err: unknown) => {
      this.storeFailed(run, err);
      throw err;
    });
    if (options.waitForStore === false) {
      persisted.catch(() => undefined); // reported in the run's stream (error, then end)
      return run;
    }
    await persisted;
    return run;
  }

  /**
   * The run's record could not be stored. A run that is executing is stopped
   * ({@link finish} rolls back what it wrote and ends its stream with an
   * error); a queued one is dropped from its queue.
   */
  private storeFailed(run: InternalRun, err: unknown): void {
    this.options.log(`[gateway] could not store run ${run.runId}: ${(err as Error)?.message ?? String(err)}`);
    if (TERMINAL_RUN_STATUSES.has(run.status)) return;
    if (run.started) {
      run.controller.abort(new RunCancelledError("store"));
      return;
    }
    const { threadId, runId } = run;
    this.live.delete(runId);
    if (this.active.get(threadId) === run) {
      this.active.delete(threadId);
      const next = this.queues.get(threadId)?.shift();
      if (next) this.start(next);
    } else {
      const q = this.queues.get(threadId) ?? [];
      const at = q.indexOf(run);
      if (at >= 0) q.splice(at, 1);
    }
    run.status = "error";
    run.buffer.publish("error", { message: STORE_FAILED, name: "StoreError" });
    run.buffer.close();
    run.resolveDone();
  }

  /** Make the run its thread's active run and execute it. */
  private start(run: InternalRun): void {
    run.started = true;
    this.active.set(run.threadId, run);
    void this.execute(run);
  }

  /** The run's `onEvent` (returned by a call, so the closure is not named at each run). */
  private forwarder(run: InternalRun, frames: MessageCoalescer): NonNullable<RunOptions["onEvent"]> {
    return (ev) => this.publish(run, ev.mode, ev.ns ?? [], ev.data, frames);
  }

  /** One harness event into the run's stream (the harness already sends only the requested modes). */
  private publish(run: InternalRun, mode: StreamMode, ns: string[], data: unknown, out: MessageCoalescer): void {
    if (ns.length && !run.prepared.subgraphs) return;
    const base = EVENT_NAME[mode] ?? mode;
    // state keys holding host paths (thread_data) go out as virtual paths
    out.push(ns.length ? [base, ...ns].join("|") : base, publicStreamData(mode, data));
  }

  private async execute(run: InternalRun): Promise<void> {
    const { threadId } = run;
    let result: RunResult | undefined;
    let failure: unknown;
    let agent: Agent | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frames = new MessageCoalescer((event, data) => run.buffer.publish(event, data));
    try {
      if (run.status !== "running") {
        run.status = "running";
        await this.stores.runs.update(run.runId, { status: "running", updatedAt: isoNow() });
      }
      if (this.options.runTimeoutMs) {
        timer = setTimeout(() => {
          run.timedOut = true;
          run.controller.abort(new RunCancelledError("timeout"));
        }, this.options.runTimeoutMs);
      }
      agent = await this.runtime.buildAgent(run.prepared.settings);
      if (run.controller.signal.aborted) throw new RunCancelledError();
      await this.runtime.recorder.started({ runId: run.runId, threadId, userId: run.record.userId });
      // Events are pushed synchronously into the run's buffer (no promise per event).
      const stream = agent.stream(run.prepared.input, {
        ...run.prepared.options,
        metadata: { ...agentRunMetadata(agent), ...run.prepared.options.metadata },
        signal: run.controller.signal,
        onEvent: this.forwarder(run, frames),
      });
      result = await stream.result;
    } catch (err) {
      failure = err;
    } finally {
      frames.flush();
      if (timer) clearTimeout(timer);
    }
    await this.finish(run, result, failure);
  }

  private async finish(run: InternalRun, result: RunResult | undefined, failure: unknown): Promise<void> {
    // Settled by now unless the run wrote nothing (its writes commit after its record).
    const storeError = await run.stored.then(
      () => undefined,
      (err: unknown) => err ?? new Error("store failed"),
    );
    let status: RunStatus;
    let error: string | null = null;
    if (storeError !== undefined) {
      status = "error";
      error = STORE_FAILED;
      run.buffer.publish("error", { message: error, name: "StoreError" });
    } else if (run.cancelAction === "rollback") {
      status = "error";
      error = "Rolled back by user";
    } else if (run.timedOut) {
      status = "timeout";
      error = `Run exceeded ${this.options.runTimeoutMs} ms`;
    } else if (run.cancelAction === "interrupt") {
      status = "interrupted";
    } else if (failure !== undefined) {
      status = "error";
      // (a run's error reaches the stream and the run record: host paths in it become virtual ones)
      error = this.hostPaths.maskText(failure instanceof Error ? failure.message : String(failure));
      const name = failure instanceof Error ? failure.name : "Error";
      run.buffer.publish("error", { message: error, name });
      if (!(failure instanceof DeerFlowError)) this.options.log(`[gateway] run ${run.runId} failed: ${name}: ${error}`);
    } else if (result) {
      if (result.status === "success") status = "success";
      else if (result.status === "interrupted" || result.status === "cancelled") status = "interrupted";
      else {
        status = "error";
        error = this.hostPaths.maskText(result.error?.message ?? "Run failed");
        run.buffer.publish("error", { message: error, name: result.error?.name ?? "Error" });
      }
    } else {
      status = "error";
      error = "Run ended without a result";
    }

    // A run that never loaded its thread committed nothing: nothing to roll back. A run without a stored record
    // leaves nothing behind either.
    const rolledBack = run.cancelAction === "rollback" || storeError !== undefined;
    if (rolledBack && result && result.startCheckpointId !== undefined) {
      await this.rollback(run.threadId, result.startCheckpointId).catch((err: unknown) =>
        this.options.log(`[gateway] rollback of run ${run.runId} failed: ${(err as Error)?.message ?? String(err)}`),
      );
    }
    run.status = status;
    const wasActive = this.active.get(run.threadId) === run;
    if (wasActive) this.active.delete(run.threadId);
    const next = wasActive ? this.queues.get(run.threadId)?.shift() : undefined;
    // The bookkeeping is queued (not awaited) before the stream ends: the stores commit pending writes before any
    // read, so a client reading the run, thread or transcript right after `end` sees them, and `end` is not held
    // back by the commit.
    const bookkeeping = this.runtime.recorder.finish({
      runId: run.runId,
      threadId: run.threadId,
      userId: run.record.userId,
      status,
      error,
      result,
      rolledBack,
      threadStatus: wasActive ? (next ? "running" : status === "success" ? "idle" : status) : null,
      agentName: run.prepared.settings.agentName ?? null,
    });
    run.buffer.close();
    run.resolveDone();
    this.scheduleReap(run);
    if (next) this.start(next);
    await bookkeeping;
  }

  private async rollback(threadId: string, preCheckpointId: string | null): Promise<void> {
    if (preCheckpointId) await this.runtime.updateState(threadId, {}, { checkpointId: preCheckpointId, asNode: "rollback" });
    else await this.runtime.checkpointer.deleteThread(threadId);
  }

  private scheduleReap(run: InternalRun): void {
    const t = setTimeout(() => {
      this.reapTimers.delete(t);
      if (this.live.get(run.runId) === run) this.live.delete(run.runId);
    }, this.options.reapAfterMs);
    t.unref?.();
    this.reapTimers.add(t);
  }

  /**
   * Cancel a run. 404 when unknown, 409 when already terminal. With `wait`
   * resolves once the run stopped.
   */
  async cancel(runId: string, action: CancelAction, wait: boolean): Promise<void> {
    const run = this.live.get(runId);
    if (!run) {
      const rec = await this.stores.runs.get(runId);
      if (!rec) throw new HttpError(404, `Run ${runId} not found`);
      if (TERMINAL_RUN_STATUSES.has(rec.status)) throw new HttpError(409, `Run ${runId} is not cancellable (status: ${rec.status})`);
      throw new HttpError(409, `Run ${runId} is not active on this worker`, { "Retry-After": "1" });
    }
    if (TERMINAL_RUN_STATUSES.has(run.status)) throw new HttpError(409, `Run ${runId} is not cancellable (status: ${run.status})`);
    run.cancelAction ??= action;
    if (!run.started) {
      const q = this.queues.get(run.threadId) ?? [];
      const at = q.indexOf(run);
      if (at >= 0) q.splice(at, 1);
      await this.finish(run, undefined, undefined);
    } else {
      run.controller.abort(new RunCancelledError(action));
    }
    if (wait) await run.done;
  }

  /** Stop accepting runs, interrupt everything in flight and wait for it to settle. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.live.values()].filter((r) => !TERMINAL_RUN_STATUSES.has(r.status));
    await Promise.all(pending.map((r) => this.cancel(r.runId, "interrupt", true).catch(() => undefined)));
    for (const t of this.reapTimers) clearTimeout(t);
    this.reapTimers.clear();
  }
}
