import type { AIMessage, Message, ToolCall, ToolMessage } from "../messages";
import type { CheckpointFence } from "../checkpoints/types";
import type { ChatModel, ModelSettings } from "../models/types";
import type { AgentState, Command, StateSchema, StateUpdate } from "../state";
import type { CustomEvent, RunContext, ToolDefinition } from "../tools/types";
import type { RunOutcome, RunOutcomeRecorder } from "./outcome";
import type { RunIdentity, RunSecrets } from "./run-context";
import type { LeadRuntimeOptions } from "./run-settings";

/** Stream modes of a run (LangGraph names; `messages` is the tuple mode). */
export type StreamMode = "values" | "updates" | "messages" | "custom" | "checkpoints" | "debug" | "tasks";

/** One event of a run's stream. `ns` is empty for the root run, `["task:<id>"]` for a nested run. */
export interface StreamEvent {
  mode: StreamMode;
  ns: string[];
  data: unknown;
}

/** Where a hook can send the run. */
export type JumpTarget = "end" | "model" | "tools";

/** What a before/after hook returns: a partial state update, optionally with a jump. */
export type HookResult = (StateUpdate & { jumpTo?: JumpTarget }) | void | undefined;

/** The runtime handed to middleware hooks. */
export interface Runtime<S extends AgentState = AgentState> {
  readonly threadId: string;
  readonly runId: string;
  /** Per-run context: typed `identity`, `settings` and `secrets`, and the request's wire keys. */
  readonly context: RunContext;
  /** Where middlewares report the run's stop reason, usage and error (read back from `RunResult.outcome`). */
  readonly outcome: RunOutcomeRecorder;
  readonly signal: AbortSignal;
  /** The agent's model (middlewares such as Title may call it directly). */
  readonly model: ChatModel;
  /** Number of model calls made so far in this run. */
  readonly modelCalls: number;
  /** Emit a `custom` stream event. */
  writer(event: CustomEvent): void;
  /** Forward an already-built stream event (used to nest a sub-agent's stream under this run). */
  emit(event: StreamEvent): void;
  /** Run configuration (`configurable`, `metadata`). */
  readonly config: RunConfig;
  /** Phantom field so `S` participates in typing. */
  readonly __state?: S;
}

/** The request a `wrapModelCall` middleware sees and may rewrite (copy, then pass on). */
export interface ModelCallRequest<S extends AgentState = AgentState> {
  model: ChatModel;
  /** The static system prompt; the innermost handler prepends it as a system message. */
  systemPrompt?: string;
  /** Conversation messages (state messages, possibly rewritten for this call only). */
  messages: Message[];
  tools: ToolDefinition[];
  settings: ModelSettings;
  state: S;
  runtime: Runtime<S>;
}

/** Calls the next layer (ultimately the model). */
export type ModelCallHandler<S extends AgentState = AgentState> = (request: ModelCallRequest<S>) => Promise<AIMessage>;

/** The request a `wrapToolCall` middleware sees. */
export interface ToolCallRequest<S extends AgentState = AgentState> {
  toolCall: ToolCall;
  /** Undefined when the model called a tool that does not exist. */
  tool?: ToolDefinition;
  state: S;
  runtime: Runtime<S>;
}

/** What executing a tool call yields. */
export type ToolCallResult = ToolMessage | Command;

/** Calls the next layer (ultimately the tool). */
export type ToolCallHandler<S extends AgentState = AgentState> = (request: ToolCallRequest<S>) => Promise<ToolCallResult>;

/**
 * A middleware: plain hook functions, not graph nodes. Ordering follows
 * LangChain: `before*` hooks in list order, `after*` in reverse order, the
 * first middleware is the outermost `wrap*` layer.
 *
 * Hooks must treat the state and its messages as immutable: to change a
 * message, return a new object with the same `id` in `messages` (it replaces
 * the old one). An in-place edit is not checkpointed, transcribed or streamed.
 */
export interface AgentMiddleware<S extends AgentState = AgentState> {
  readonly name: string;
  /** Extra state channels this middleware needs. */
  readonly stateSchema?: StateSchema;
  /** Tools this middleware contributes. */
  readonly tools?: ToolDefinition[];
  beforeAgent?(state: S, runtime: Runtime<S>): HookResult | Promise<HookResult>;
  beforeModel?(state: S, runtime: Runtime<S>): HookResult | Promise<HookResult>;
  afterModel?(state: S, runtime: Runtime<S>): HookResult | Promise<HookResult>;
  afterAgent?(state: S, runtime: Runtime<S>): HookResult | Promise<HookResult>;
  wrapModelCall?(request: ModelCallRequest<S>, handler: ModelCallHandler<S>): Promise<AIMessage>;
  wrapToolCall?(request: ToolCallRequest<S>, handler: ToolCallHandler<S>): Promise<ToolCallResult>;
  /**
   * Cleanup that always runs once when a run ends, whatever its status
   * (success, error, cancelled, interrupted) — unlike `afterAgent`, which only
   * runs when the loop completes. It cannot change state. Not a LangChain hook.
   */
  afterRun?(state: S, runtime: Runtime<S>, status: RunStatus): void | Promise<void>;
}

/** Run configuration, LangGraph `RunnableConfig`-like. */
export interface RunConfig {
  configurable: Record<string, unknown>;
  metadata: Record<string, unknown>;
  recursionLimit: number;
}

/** A pending interrupt (human-in-the-loop pause). */
export interface Interrupt {
  id: string;
  value: unknown;
  /** The tool call that raised it. */
  toolCallId?: string;
}

/** Input of a run: a state update (usually `{messages:[…]}`), a resume Command, or null (continue). */
export type RunInput = StateUpdate | Command | null | undefined;

/** Options of one run. */
export interface RunOptions {
  threadId?: string;
  runId?: string;
  /** Fork from (or resume at) this checkpoint instead of the thread's latest. */
  checkpointId?: string;
  /**
   * The request's context in DeerFlow's wire names (`user_id`,
   * `agent_name`, `secrets`, run settings…): `runtime.context` is built from
   * it (see `createRunContext`).
   */
  context?: Record<string, unknown>;
  /** Typed identity; wins over `context.user_id` / `context.agent_name`. */
  identity?: Partial<Pick<RunIdentity, "userId" | "agentName">>;
  /** The run's parsed settings (`readRuntimeOptions` / `runSettings`; else parsed from `context` and `configurable`). */
  settings?: LeadRuntimeOptions;
  /** Request-scoped secrets (else `context.secrets`); they reach `runtime.context.secrets` only. */
  secrets?: RunSecrets;
  configurable?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** Max model+tool steps (default 100). */
  recursionLimit?: number;
  streamMode?: StreamMode[];
  signal?: AbortSignal;
  /** Prefix for this run's events (nested runs). */
  namespace?: string[];
  /** Do not persist checkpoints for this run (sub-agents). */
  ephemeral?: boolean;
  /** The lease claim the run's checkpoint writes are made under (a run service's owned run; see `CheckpointFence`). */
  fence?: CheckpointFence;
  /** Initial state for an ephemeral run (sub-agents share sandbox/thread_data). */
  initialState?: Partial<AgentState>;
  /**
   * Receive stream events synchronously, as they happen, instead of through
   * the stream's async iterator (which then yields nothing). Meant for
   * servers fanning events out to many clients: no promise per event. Keep
   * it cheap; an exception it throws is logged and the run goes on.
   */
  onEvent?: (event: StreamEvent) => void;
  /**
   * Called with `true` when the run starts waiting for its queued checkpoint
   * writes to be durable (before a tool with side effects runs, and before
   * the run returns) and with `false` once they are. What the run emits
   * right after the wait follows what it emitted right before: a server
   * streaming the run may send both in one network write.
   */
  onDurableWait?: (waiting: boolean) => void;
}

/** Final status of a run. */
export type RunStatus = "success" | "interrupted" | "cancelled" | "error";

/** What a finished run reports. */
export interface RunResult<S extends AgentState = AgentState> {
  status: RunStatus;
  state: S;
  checkpointId: string | null;
  interrupts: Interrupt[];
  error?: Error;
  /**
   * The checkpoint the run started from: `null` on a new thread, absent when
   * the run ended before loading its thread (or is ephemeral) — then it
   * committed nothing.
   */
  startCheckpointId?: string | null;
  /** The thread's state when the run started, before its input was applied (absent on a new thread). */
  startState?: S;
  /** Stop reason, usage by caller and error, as reported through `runtime.outcome`. */
  outcome: RunOutcome;
}

/** A state snapshot at a checkpoint. */
export interface StateSnapshot<S extends AgentState = AgentState> {
  values: S;
  checkpointId: string;
  parentCheckpointId: string | null;
  createdAt: string;
  metadata: Record<string, unknown>;
  /** Non-empty when the run paused (e.g. `["tools"]` for a pending interrupt). */
  next: string[];
  interrupts: Interrupt[];
}

/** A stream that also resolves to the run's result once drained. */
export interface RunStream<S extends AgentState = AgentState> extends AsyncIterable<StreamEvent> {
  /** Resolves when the run ends (drains the stream if nobody iterates it). */
  readonly result: Promise<RunResult<S>>;
}

/** A compiled agent. */
export interface Agent<S extends AgentState = AgentState> {
  readonly name: string;
  readonly stateSchema: StateSchema;
  readonly tools: readonly ToolDefinition[];
  readonly middleware: readonly AgentMiddleware<S>[];
  stream(input: RunInput, options?: RunOptions): RunStream<S>;
  invoke(input: RunInput, options?: RunOptions): Promise<RunResult<S>>;
  getState(threadId: string, checkpointId?: string): Promise<StateSnapshot<S> | undefined>;
  getStateHistory(threadId: string, options?: { limit?: number; before?: string }): Promise<StateSnapshot<S>[]>;
  /** Write state outside a run, as a new checkpoint (source `update`). */
  updateState(threadId: string, update: StateUpdate, options?: { checkpointId?: string; asNode?: string }): Promise<StateSnapshot<S>>;
}
