import { MessageCoalescer } from "./message-coalescer";
import { randomUUID } from "node:crypto";
import {
  Command,
  coerceMessage,
  DeerFlowError,
  emptyUsage,
  messagesChangedByRun,
  RunCancelledError,
  runUsageFromMessages,
  TERMINAL_RUN_STATUSES,
  ValidationError,
} from "@deerflow/harness";
import type {
  Agent,
  Message,
  MultitaskStrategy,
  PersistenceStores,
  RunInput,
  RunOptions,
  RunRecord,
  RunRecordStatus as RunStatus,
  RunResult,
  RunUsage,
  StreamMode,
} from "@deerflow/harness";
import { HttpError } from "../http-error";
import type { AgentRunConfig, ResolvedGatewayOptions } from "../options";
import { RunEventBuffer } from "../sse/event-buffer";
import { agentNameFromAssistant, CONTEXT_WHITELIST, requestedModes } from "./run-request";
import type { ClientStreamMode, RunCreateRequest } from "./run-request";
import { redactSecrets } from "./run-response";

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
  agentConfig: AgentRunConfig;
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
  /** Resolves once the run record is stored; a run executes only after that. */
  stored: Promise<void>;
  resolveDone: () => void;
}

/** Where a run started: its thread's checkpoint, messages and title before the run. */
interface RunStart {
  checkpointId: string | null;
  messages: Message[];
  title: unknown;
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

function now(): string {
  return new Date().toISOString();
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

  constructor(
    private readonly stores: PersistenceStores,
    private readonly options: ResolvedGatewayOptions,
  ) {}

  /** The in-memory run (with its replay buffer), if not reaped yet. */
  getLive(runId: string): LiveRun | undefined {
    return this.live.get(runId);
  }

  /** True while the thread has an active or queued run. */
  hasWorkInFlight(threadId: string): boolean {
    return this.active.has(threadId) || (this.queues.get(threadId)?.length ?? 0) > 0;
  }

  /** An agent built with an empty run config (state reads, updates). */
  async stateAgent(threadId: string): Promise<Agent> {
    return this.options.agentFactory({
      configurable: { thread_id: threadId },
      context: { thread_id: threadId, user_id: this.options.userId },
      assistantId: "lead_agent",
    });
  }

  /** Validate a run request and build what the agent needs. Throws HttpError on client mistakes. */
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
    if (modelName !== undefined && this.options.models && this.options.models.length) {
      const known = this.options.models.some((m) => m.name === modelName);
      if (!known) throw new HttpError(400, `Model '${String(modelName)}' is not in the configured model allowlist`);
    }
    Object.assign(configurable, context, { thread_id: threadId });
    Object.assign(context, { thread_id: threadId, run_id: runId, user_id: userId });

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
      agentConfig: { configurable, context, assistantId: req.assistant_id ?? "lead_agent" },
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
      const agent = await this.options.agentFactory(prepared.agentConfig);
      const snap = await agent.getState(threadId, prepared.options.checkpointId).catch(() => undefined);
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
    const ts = now();
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
      modelName: typeof prepared.agentConfig.context.model_name === "string" ? prepared.agentConfig.context.model_name : null,
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
      // Both writes are queued now, in this order, and commit in one transaction.
      stored: Promise.all([this.stores.runs.create(record), this.stores.threads.update(threadId, { status: "running", updatedAt: ts })]).then(
        () => undefined,
      ),
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
      this.dropUnstored(run, err);
      throw err;
    });
    if (options.waitForStore === false) {
      persisted.catch(() => undefined); // reported in the run's stream (error, then end)
      return run;
    }
    await persisted;
    return run;
  }

  /** The run's record could not be stored: release its place and end its stream with an error. */
  private dropUnstored(run: InternalRun, err: unknown): void {
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
    this.options.log(`[gateway] could not store run ${runId}: ${(err as Error)?.message ?? String(err)}`);
    run.status = "error";
    run.buffer.publish("error", { message: "Could not store the run", name: "StoreError" });
    run.buffer.close();
    run.resolveDone();
  }

  /** Make the run its thread's active run; it executes once its record is stored. */
  private start(run: InternalRun): void {
    run.started = true;
    this.active.set(run.threadId, run);
    void run.stored.then(
      () => this.execute(run),
      () => undefined, // dropUnstored() releases the thread
    );
  }

  /** One harness event into the run's stream (the harness already sends only the requested modes). */
  private publish(run: InternalRun, mode: StreamMode, ns: string[], data: unknown, out: MessageCoalescer): void {
    if (ns.length && !run.prepared.subgraphs) return;
    const base = EVENT_NAME[mode] ?? mode;
    out.push(ns.length ? [base, ...ns].join("|") : base, data);
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
        await this.stores.runs.update(run.runId, { status: "running", updatedAt: now() });
      }
      if (this.options.runTimeoutMs) {
        timer = setTimeout(() => {
          run.timedOut = true;
          run.controller.abort(new RunCancelledError("timeout"));
        }, this.options.runTimeoutMs);
      }
      agent = await this.options.agentFactory(run.prepared.agentConfig);
      if (run.controller.signal.aborted) throw new RunCancelledError();
      // Events are pushed synchronously into the run's buffer (no promise per event).
      const stream = agent.stream(run.prepared.input, {
        ...run.prepared.options,
        signal: run.controller.signal,
        onEvent: (ev) => this.publish(run, ev.mode, ev.ns ?? [], ev.data, frames),
      });
      result = await stream.result;
    } catch (err) {
      failure = err;
    } finally {
      frames.flush();
      if (timer) clearTimeout(timer);
    }
    const start =
      result && result.startCheckpointId !== undefined
        ? {
            checkpointId: result.startCheckpointId,
            messages: (result.startState?.messages ?? []) as Message[],
            title: (result.startState as Record<string, unknown> | undefined)?.title,
          }
        : undefined;
    await this.finish(run, agent, result, failure, start);
  }

  private async finish(
    run: InternalRun,
    agent: Agent | undefined,
    result: RunResult | undefined,
    failure: unknown,
    start: RunStart | undefined,
  ): Promise<void> {
    let status: RunStatus;
    let error: string | null = null;
    if (run.cancelAction === "rollback") {
      status = "error";
      error = "Rolled back by user";
    } else if (run.timedOut) {
      status = "timeout";
      error = `Run exceeded ${this.options.runTimeoutMs} ms`;
    } else if (run.cancelAction === "interrupt") {
      status = "interrupted";
    } else if (failure !== undefined) {
      status = "error";
      error = failure instanceof Error ? failure.message : String(failure);
      const name = failure instanceof Error ? failure.name : "Error";
      run.buffer.publish("error", { message: error, name });
      if (!(failure instanceof DeerFlowError)) this.options.log(`[gateway] run ${run.runId} failed: ${name}: ${error}`);
    } else if (result) {
      if (result.status === "success") status = "success";
      else if (result.status === "interrupted" || result.status === "cancelled") status = "interrupted";
      else {
        status = "error";
        error = result.error?.message ?? "Run failed";
        run.buffer.publish("error", { message: error, name: result.error?.name ?? "Error" });
      }
    } else {
      status = "error";
      error = "Run ended without a result";
    }

    // Final writes are queued, not awaited, before the stream ends: the stores commit pending writes
    // before any read, so a client reading the run, thread or transcript right after `end` sees them,
    // and `end` is not held back by the commit.
    const writes: Array<Promise<unknown>> = [];
    const logFailure = (err: unknown): void =>
      this.options.log(`[gateway] bookkeeping of run ${run.runId} failed: ${(err as Error)?.message ?? String(err)}`);
    let usage: RunUsage = emptyUsage();
    try {
      if (run.cancelAction === "rollback" && agent) {
        // A run that never loaded its thread committed nothing: nothing to roll back.
        if (start) await this.rollback(agent, run.threadId, start.checkpointId);
      } else if (agent && start) {
        // `start` is known once the run loaded its thread; before that it changed nothing.
        const finalState = (result?.state ?? (await agent.getState(run.threadId).catch(() => undefined))?.values) as
          | Record<string, unknown>
          | undefined;
        const messages = (finalState?.messages ?? []) as Message[];
        const preMessageIds = new Set(start.messages.map((m) => m.id).filter((x): x is string => !!x));
        usage = runUsageFromMessages(messages, preMessageIds, run.prepared.agentConfig.context);
        const touched = messagesChangedByRun(messages, start.messages);
        if (touched.length) {
          writes.push(this.stores.messages.record(run.threadId, run.runId, touched as unknown as Array<Record<string, unknown>>, now()));
        }
        const title = finalState?.title;
        if (typeof title === "string" && title && title !== start.title) {
          writes.push(this.stores.threads.update(run.threadId, { displayName: title }));
        }
      }
    } catch (err) {
      logFailure(err);
    }
    const ts = now();
    run.status = status;
    const stopReason = typeof run.prepared.agentConfig.context.stop_reason === "string" ? (run.prepared.agentConfig.context.stop_reason as string) : null;
    writes.push(this.stores.runs.update(run.runId, { status, error, usage, stopReason, updatedAt: ts }));
    const wasActive = this.active.get(run.threadId) === run;
    if (wasActive) this.active.delete(run.threadId);
    const next = wasActive ? this.queues.get(run.threadId)?.shift() : undefined;
    if (wasActive) {
      writes.push(this.stores.threads.update(run.threadId, { status: next ? "running" : status === "success" ? "idle" : status, updatedAt: ts }));
    }
    run.buffer.close();
    run.resolveDone();
    this.scheduleReap(run);
    if (next) this.start(next);
    await Promise.all(writes.map((w) => w.catch(logFailure)));
  }

  private async rollback(agent: Agent, threadId: string, preCheckpointId: string | null): Promise<void> {
    if (preCheckpointId) {
      await agent.updateState(threadId, {}, { checkpointId: preCheckpointId, asNode: "rollback" });
    } else if (this.options.checkpointer) {
      await this.options.checkpointer.deleteThread(threadId);
    }
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
      await this.finish(run, undefined, undefined, undefined, undefined);
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
