import { randomUUID } from "node:crypto";
import { CheckpointError, DeerFlowError, errorMessage, GraphRecursionError, RunCancelledError } from "../errors";
import { AIMessageAccumulator } from "../models";
import type { ChatModel } from "../models";
import { systemMessage } from "../messages";
import type { Message, ToolMessage } from "../messages";
import { applyUpdate, initialState, isCommand } from "../state";
import type { AgentState, StateUpdate } from "../state";
import { toToolSpec } from "../tools";
import type { CustomEvent, RunContext } from "../tools";
import { createRunContext } from "./run-context";
import { messageEventMeta, unseenMessages } from "./message-events";
import type { CheckpointMetadata } from "../checkpoints";
import { EventQueue } from "./event-queue";
import { isAbortError } from "./interrupt";
import { callHook, composeModelCall, composeToolCall } from "./middleware-chain";
import type { LoopHook } from "./middleware-chain";
import type { AgentParts } from "./agent-parts";
import { AGENT_CALLER, createRunOutcomeRecorder } from "./outcome";
import { CheckpointWrites } from "./checkpoint-writes";
import { NEXT_NODES_KEY, pendingToolCalls } from "./loop-steps";
import type { Phase } from "./loop-steps";
import { makeToolExecutor, runToolCall } from "./tool-step";
import { TaskEvents, type RunTask } from "./task-events";
import { settleToolCalls } from "./tool-results";
import type {
  Interrupt,
  JumpTarget,
  ModelCallHandler,
  RunConfig,
  RunInput,
  RunOptions,
  RunResult,
  Runtime,
  StreamEvent,
  StreamMode,
  ToolCallHandler,
  ToolCallResult,
} from "./types";

function isThenable<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === "function";
}

export type { AgentParts } from "./agent-parts";

/**
 * One execution of an agent on a thread: the loop
 * beforeAgent → [beforeModel → model → afterModel → tools]* → afterAgent,
 * committing a checkpoint after every step and emitting stream events.
 */
export class RunExecution<S extends AgentState> {
  readonly events = new EventQueue<StreamEvent>();
  readonly runId: string;
  readonly threadId: string;
  private readonly parts: AgentParts<S>;
  private readonly options: RunOptions;
  private readonly modes: Set<StreamMode>;
  private readonly ns: string[];
  /** The caller's signal, if it gave one: the only signal that can cancel the run. */
  private readonly callerSignal: AbortSignal | undefined;
  /** The run's own signal when the caller gave none, made when first asked for (see {@link signal}). */
  private ownSignal: AbortSignal | undefined;
  private readonly context: RunContext;
  private readonly outcome = createRunOutcomeRecorder();
  private readonly config: RunConfig;
  private readonly runtime: Runtime<S>;
  private readonly resumeValues = new Map<string, unknown>();
  private state!: S;
  private parent: { checkpointId: string | null; values: AgentState | undefined } = { checkpointId: null, values: undefined };
  private stepNo = -1;
  private readonly writes: CheckpointWrites; // queued checkpoint writes and the first write failure
  private stepsUsed = 0;
  private modelCalls = 0;
  /** `undefined` until the starting state was loaded. */
  private startCheckpointId: string | null | undefined;
  private startState: S | undefined;
  private modelHandler!: ModelCallHandler<S>;
  private toolHandler!: ToolCallHandler<S>;
  /** The `tasks`/`debug` frames of the loop's tasks. */
  private readonly tasks: TaskEvents;
  /** The node task running now (its id names the node's checkpoint namespace in `messages` metadata). */
  private task: RunTask | undefined;
  /** The task of each tool call of the current tools step (by tool call id). */
  private readonly toolTasks = new Map<string, RunTask>();

  constructor(parts: AgentParts<S>, options: RunOptions) {
    this.parts = parts;
    this.options = options;
    this.runId = options.runId ?? randomUUID();
    this.threadId = options.threadId ?? randomUUID();
    this.modes = new Set(options.streamMode ?? ["values", "updates", "messages", "custom"]);
    this.ns = options.namespace ?? [];
    this.callerSignal = options.signal;
    this.writes = new CheckpointWrites(options.onDurableWait);
    this.tasks = new TaskEvents({ has: this.modes.has.bind(this.modes), emit: this.emit.bind(this) });
    this.context = createRunContext({
      threadId: this.threadId,
      runId: this.runId,
      context: options.context,
      configurable: options.configurable,
      identity: options.identity,
      settings: options.settings,
      secrets: options.secrets,
    });
    this.config = {
      configurable: { ...(options.configurable ?? {}), thread_id: this.threadId },
      metadata: { ...(options.metadata ?? {}) },
      recursionLimit: options.recursionLimit ?? parts.defaultRecursionLimit,
    };
    const self = this;
    this.runtime = {
      threadId: this.threadId,
      runId: this.runId,
      context: this.context,
      outcome: this.outcome,
      get signal() {
        return self.signal;
      },
      model: parts.model,
      get modelCalls() {
        return self.modelCalls;
      },
      // Bound methods: the TypeScript loader names each arrow in a literal at creation, once per run.
      writer: this.writeCustom.bind(this),
      emit: this.emitEvent.bind(this),
      config: this.config,
    };
  }

  private writeCustom(event: CustomEvent): void {
    this.emit("custom", event);
  }

  private emitEvent(event: StreamEvent): void {
    if (this.modes.has(event.mode)) this.deliver(event);
  }

  /** Hand an event to the caller: the synchronous `onEvent` callback when given, else the async queue. */
  private deliver(event: StreamEvent): void {
    const onEvent = this.options.onEvent;
    if (!onEvent) {
      this.events.push(event);
      return;
    }
    try {
      onEvent(event);
    } catch (err) {
      console.warn(`[deerflow] onEvent callback failed: ${errorMessage(err)}`);
    }
  }

  private emit(mode: StreamMode, data: unknown): void {
    if (this.modes.has(mode)) this.deliver({ mode, ns: this.ns, data });
  }

  private messageMeta(node: string, task: RunTask | undefined, model?: ChatModel): Record<string, unknown> {
    return messageEventMeta({ metadata: this.config.metadata, threadId: this.threadId, ns: this.ns, step: this.stepNo + 1, task }, node, model);
  }

  /**
   * The signal middlewares and tools see: the caller's, else one of the run's own that never aborts (nobody holds
   * its controller). That one is made only when something asks for it, so a run no hook or tool asks about makes
   * no abort controller; the model call gets the caller's signal or none, which means the same.
   */
  private get signal(): AbortSignal {
    return this.callerSignal ?? (this.ownSignal ??= new AbortController().signal);
  }

  private checkAbort(): void {
    const signal = this.callerSignal;
    if (signal?.aborted) throw new RunCancelledError(errorMessage(signal.reason ?? "aborted"));
  }

  /** Apply an update (its `jumpTo` dropped); returns what was applied, undefined when nothing was. */
  private apply(update: StateUpdate | undefined, node?: string, fromHook = false): StateUpdate | undefined {
    if (!update) return undefined;
    const clean: StateUpdate = {};
    let any = false;
    // keys, not entries: no [key, value] pair per field, several updates a turn
    for (const k of Object.keys(update)) {
      const v = update[k];
      if (k === "jumpTo" || v === undefined) continue;
      clean[k] = v;
      any = true;
    }
    if (!any) return undefined;
    const before = this.state;
    this.state = applyUpdate(this.parts.schema, this.state, clean) as S;
    if (node) {
      this.emit("updates", { [node]: clean });
      // the model and tool steps stream their own messages; a hook's new messages are echoed
      if (fromHook) this.echoNewMessages(before, clean, node);
    }
    return clean;
  }

  /**
   * As LangGraph's messages mode does for non-model nodes: a message a hook
   * writes under an id the thread has not seen (e.g. the user message re-keyed
   * by the date reminder) is streamed as a `messages` event.
   */
  private echoNewMessages(before: S, update: StateUpdate, node: string): void {
    if (!this.modes.has("messages")) return;
    for (const m of unseenMessages(before.messages as Message[] | undefined, update.messages)) this.deliver({ mode: "messages", ns: this.ns, data: [m, this.messageMeta(node, this.task)] });
  }

  /**
   * Checkpoint the current state and emit it as `values`. The write is queued and the loop goes on (LangGraph's
   * "async" durability): no model call waits for a commit, reads still see it (stores commit queued writes first,
   * in order). The loop waits for durability only where it is promised: before a tool with side effects runs
   * (see `toolsPhase`), and before the run returns (its end, an interrupt, a cancel or a failure). A failed
   * write fails the run at its next commit.
   */
  private async commit(writer: string, opts: { source?: "input" | "loop" | "fork"; interrupts?: Interrupt[]; next?: Phase } = {}): Promise<void> {
    const { source = "loop", interrupts, next } = opts;
    this.stepNo++;
    if (this.writes.error) throw this.writes.error;
    if (this.options.ephemeral || (this.parent.values === this.state && !interrupts && source !== "input")) {
      this.emit("values", this.state);
      return;
    }
    // as in LangGraph, a checkpoint's metadata carries the run's metadata (agent settings, replay markers)
    const metadata: CheckpointMetadata = { ...this.config.metadata, parents: {}, step: this.stepNo, source, run_id: this.runId, writer };
    if (interrupts?.length) metadata.interrupts = interrupts;
    // What the loop runs after this checkpoint (LangGraph's `next`): a run cancelled here can be resumed from it.
    if (next && next !== "end") metadata[NEXT_NODES_KEY] = [next];
    const { loaded, durable } = this.parts.checkpointer.queue(this.threadId, this.parent, this.state, metadata, this.options.fence);
    this.emit("values", this.state);
    this.tasks.checkpoint({ threadId: this.threadId, checkpointId: loaded.record.checkpointId, parentCheckpointId: loaded.record.parentId, values: this.state, metadata, next: next && next !== "end" ? [next] : [], step: this.stepNo });
    this.parent = { checkpointId: loaded.record.checkpointId, values: this.state };
    this.writes.track(durable);
    if (this.modes.has("checkpoints")) {
      this.deliver({ mode: "checkpoints", ns: this.ns, data: { checkpoint_id: loaded.record.checkpointId, parent_checkpoint_id: loaded.record.parentId, step: this.stepNo } });
    }
  }

  private async runHooks(hook: LoopHook): Promise<JumpTarget | undefined> {
    let jump: JumpTarget | undefined;
    const steps = this.parts.hooks[hook];
    for (let i = 0; i < steps.length; i++) {
      const { mw, node } = steps[i];
      this.checkAbort();
      const task = (this.task = this.tasks.start(node, this.stepNo + 1, this.state));
      let result: Awaited<ReturnType<typeof callHook>>;
      try {
        const answer = callHook(mw, hook, this.state, this.runtime);
        // A hook that answers synchronously (most do) is not awaited: the loop is not suspended once per hook.
        result = isThenable(answer) ? await answer : answer;
      } catch (err) {
        throw this.tasks.failed(task, err);
      }
      const applied = this.apply(result ?? undefined, node, true);
      this.tasks.finish(task, applied ?? null);
      // like a LangGraph node that returned nothing: the hook ran, its update is null
      if (!applied && this.modes.has("updates")) this.emit("updates", { [node]: null });
      if (!result) continue;
      if (result.jumpTo && !jump) jump = result.jumpTo;
    }
    return jump;
  }

  private buildHandlers(): void {
    const self = this;
    this.modelHandler = composeModelCall(this.parts.middleware, (req) => this.callModel(req));
    const exec = makeToolExecutor<S>({
      tools: this.parts.tools,
      context: this.context,
      outcome: this.outcome,
      // read when a tool call asks for its signal (see `signal`)
      get runSignal() {
        return self.signal;
      },
      writer: this.runtime.writer,
      emit: this.runtime.emit,
      namespace: this.ns,
      defaultTimeoutMs: this.parts.toolTimeoutMs,
      resumeValues: this.resumeValues,
    });
    this.toolHandler = composeToolCall(this.parts.middleware, exec);
  }

  /** The innermost model call: stream the provider's reply, forwarding deltas as `messages` events. */
  private async callModel(req: Parameters<ModelCallHandler<S>>[0]): Promise<Awaited<ReturnType<ModelCallHandler<S>>>> {
    const wantMessages = this.modes.has("messages");
    this.checkAbort();
    const messages = req.systemPrompt ? [systemMessage(req.systemPrompt, { id: "system-prompt" }), ...req.messages] : req.messages;
    const acc = new AIMessageAccumulator(undefined, { model_provider: req.model.provider, model_name: req.model.modelName });
    const meta = wantMessages ? this.messageMeta("model", this.task, req.model) : undefined;
    this.modelCalls++;
    for await (const part of req.model.stream({
      messages,
      tools: req.tools.map(toToolSpec),
      settings: req.settings,
      signal: this.callerSignal,
    })) {
      const chunk = acc.push(part, meta !== undefined);
      if (chunk && meta) this.deliver({ mode: "messages", ns: this.ns, data: [chunk, meta] });
    }
    this.checkAbort();
    const reply = acc.finish();
    // Every model call is counted here, whichever middlewares are on: the outcome's totals are the provider's own figures.
    this.outcome.recordUsage(AGENT_CALLER, reply.usage_metadata);
    return reply;
  }

  /** Execute the run to completion. Never throws: failures are reported in the result. */
  async execute(input: RunInput): Promise<RunResult<S>> {
    let result: Omit<RunResult<S>, "outcome">;
    try {
      result = await this.loop(input);
      const writeError = await this.writes.settle();
      if (writeError) throw writeError;
      const runError = this.outcome.error;
      if (result.status === "success" && runError) {
        result = { ...result, status: "error", error: new DeerFlowError(runError.type, runError.reason) };
      }
    } catch (err) {
      await this.writes.settle();
      const cancelled = this.callerSignal?.aborted === true || isAbortError(err);
      result = {
        status: cancelled ? "cancelled" : "error",
        state: this.state,
        checkpointId: this.parent.checkpointId,
        interrupts: [],
        error: err instanceof Error ? err : new Error(errorMessage(err)),
      };
    }
    if (this.startCheckpointId !== undefined) result.startCheckpointId = this.startCheckpointId;
    if (this.startState) result.startState = this.startState;
    for (const mw of this.parts.middleware) {
      if (!mw.afterRun) continue;
      try {
        await mw.afterRun(this.state ?? ({ messages: [] } as unknown as S), this.runtime, result.status);
      } catch (err) {
        console.warn(`[deerflow] ${mw.name}.afterRun failed: ${errorMessage(err)}`);
      }
    }
    this.events.close();
    return { ...result, outcome: this.outcome.snapshot() };
  }

  private async loadInitial(): Promise<{ pendingInterrupts: Interrupt[] }> {
    if (this.options.ephemeral) {
      this.state = { ...initialState(this.parts.schema), ...(this.options.initialState ?? {}) } as S;
      return { pendingInterrupts: [] };
    }
    const loaded = await this.parts.checkpointer.load(this.threadId, this.options.checkpointId);
    if (!loaded) {
      if (this.options.checkpointId) {
        throw new CheckpointError(`Checkpoint ${this.options.checkpointId} not found in thread ${this.threadId}`, {
          code: "checkpoint_not_found",
        });
      }
      this.state = initialState(this.parts.schema) as S;
      this.startCheckpointId = null;
      return { pendingInterrupts: [] };
    }
    this.state = { ...initialState(this.parts.schema), ...loaded.values } as S;
    this.startCheckpointId = loaded.record.checkpointId;
    this.startState = this.state;
    this.parent = { checkpointId: loaded.record.checkpointId, values: loaded.values };
    this.stepNo = loaded.record.metadata.step ?? -1;
    return { pendingInterrupts: (loaded.record.metadata.interrupts as Interrupt[] | undefined) ?? [] };
  }

  private async loop(input: RunInput): Promise<Omit<RunResult<S>, "outcome">> {
    this.buildHandlers();
    this.checkAbort(); // cancelled before it started: write nothing
    const { pendingInterrupts } = await this.loadInitial();
    let phase: Phase = "model";
    let resuming = false;
    if (isCommand(input)) {
      if (input.resume !== undefined && pendingInterrupts.length) {
        resuming = true;
        const first = pendingInterrupts[0];
        if (first.toolCallId) this.resumeValues.set(first.toolCallId, input.resume);
      }
      this.apply(input.update);
    } else if (input) {
      // LangGraph streams no `updates` event for the run's input (the first event after metadata is `values`)
      this.apply(input as StateUpdate);
    }
    await this.commit("__input__", { source: this.options.checkpointId ? "fork" : "input", next: resuming ? "tools" : "model" });
    if (resuming) {
      phase = "tools";
    } else {
      const jump = await this.runHooks("beforeAgent");
      if (jump === "end") phase = "end";
      else if (jump === "tools") phase = "tools";
      if (this.parent.values !== this.state) {
        await this.commit("before_agent", { next: phase });
      }
    }
    while (phase !== "end") {
      this.checkAbort();
      if (phase === "model") phase = await this.modelPhase();
      else {
        const out = await this.toolsPhase();
        if (out.interrupts) {
          await this.commit("tools", { interrupts: out.interrupts });
          return { status: "interrupted", state: this.state, checkpointId: this.parent.checkpointId, interrupts: out.interrupts };
        }
        phase = out.next;
      }
    }
    const before = this.state;
    await this.runHooks("afterAgent");
    if (before !== this.state) {
      await this.commit("after_agent");
    }
    return { status: "success", state: this.state, checkpointId: this.parent.checkpointId, interrupts: [] };
  }

  private async keepAnswered(settled: PromiseSettledResult<ToolCallResult>[]): Promise<void> {
    const answers = settled.flatMap((s) => (s.status === "fulfilled" && !isCommand(s.value) ? [s.value] : []));
    if (!answers.length) return;
    this.apply({ messages: answers }, "tools");
    await this.commit("tools", { next: pendingToolCalls(this.state.messages) ? "tools" : "model" });
  }

  private countStep(): void {
    if (this.stepsUsed >= this.config.recursionLimit) throw new GraphRecursionError(this.config.recursionLimit);
    this.stepsUsed++;
  }

  private async modelPhase(): Promise<Phase> {
    this.countStep();
    const jumpBefore = await this.runHooks("beforeModel");
    if (jumpBefore === "end") {
      await this.commit("before_model");
      return "end";
    }
    if (jumpBefore === "tools") return "tools";
    const task = (this.task = this.tasks.start("model", this.stepNo + 1, this.state));
    const message = await this.modelHandler({
      model: this.parts.model,
      systemPrompt: this.parts.systemPrompt,
      messages: this.state.messages,
      tools: [...this.parts.tools.values()],
      settings: { ...this.parts.modelSettings },
      state: this.state,
      runtime: this.runtime,
    }).catch((err: unknown) => {
      throw this.tasks.failed(task, err);
    });
    this.tasks.finish(task, this.apply({ messages: [message] }, "model") ?? null);
    const jumpAfter = await this.runHooks("afterModel");
    const next: Phase = jumpAfter === "end" || jumpAfter === "model" || jumpAfter === "tools" ? jumpAfter : pendingToolCalls(this.state.messages) ? "tools" : "end";
    await this.commit("model", { next });
    return next;
  }

  private async toolsPhase(): Promise<{ next: Phase; interrupts?: Interrupt[] }> {
    const pending = pendingToolCalls(this.state.messages);
    if (!pending) return { next: "model" };
    this.countStep();
    // A tool that changes the world must not run before the checkpoint that asked for it is durable: a process
    // that dies during the call leaves a thread whose head shows the call (patched as dangling on the next run),
    // never one that forgot a call whose effects happened. Tools that only read do not wait.
    if (pending.calls.some((call) => this.parts.tools.get(call.name)?.sideEffects !== false)) {
      const writeError = await this.writes.settle();
      if (writeError) throw writeError;
      this.checkAbort();
    }
    const stateAtCall = this.state;
    this.toolTasks.clear();
    pending.calls.forEach((call, i) => this.toolTasks.set(call.id, this.tasks.start("tools", this.stepNo + 1, call, i)));
    const settled = await Promise.allSettled(
      pending.calls.map((call) =>
        runToolCall(this.toolHandler, { toolCall: call, tool: this.parts.tools.get(call.name), state: stateAtCall, runtime: this.runtime }),
      ),
    );
    // Stopped while tools ran: the answers that came back (a sub-agent's "cancelled") are kept, so the thread says how they ended.
    if (this.callerSignal?.aborted) await this.keepAnswered(settled);
    this.checkAbort();
    const { results, interrupts } = settleToolCalls(settled, pending.calls, pending.invalid, { events: this.tasks, byCall: this.toolTasks });
    let goto: Phase | undefined;
    const toolMessages: ToolMessage[] = [];
    for (const r of results) {
      if (isCommand(r)) {
        this.apply(r.update, "tools");
        const msgs = (r.update.messages as Message[] | undefined) ?? [];
        for (const m of Array.isArray(msgs) ? msgs : [msgs]) if (m && m.type === "tool") toolMessages.push(m);
        if (r.goto === "end") goto = "end";
      } else {
        this.apply({ messages: [r] }, "tools");
        toolMessages.push(r);
        const def = this.parts.tools.get(r.name ?? "");
        if (def?.returnDirect && r.status !== "error") goto = goto ?? "end";
      }
    }
    if (this.modes.has("messages")) for (const m of toolMessages) this.deliver({ mode: "messages", ns: this.ns, data: [m, this.messageMeta("tools", this.toolTasks.get(m.tool_call_id))] });
    if (interrupts.length) return { next: "end", interrupts };
    await this.commit("tools", { next: goto ?? "model" });
    return { next: goto ?? "model" };
  }
}

