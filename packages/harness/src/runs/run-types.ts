import type { RunSettings } from "../deerflow-runtime/types";
import type { MultitaskStrategy, RunRecordStatus, ThreadRecord } from "../persistence";
import type { RunInput, RunResult, StreamEvent, StreamMode } from "../runtime";
import type { StreamListener } from "./backend-types";

/** How a cancel stops a run: `interrupt` keeps what it committed, `rollback` restores the thread to before the run. */
export type CancelAction = "interrupt" | "rollback";

/**
 * One run to create, fully parsed by the caller (the gateway's request
 * parser, the embedded client): identity, input, typed settings and the
 * stream shape. Nothing here is read from an untyped bag later.
 */
export interface RunRequest {
  threadId: string;
  /** The run's id (assigned by the service when absent). */
  runId?: string;
  /** The caller: the run's files, memory, agents, skills and sessions are this user's. */
  userId: string;
  /** `lead_agent` or a custom agent's assistant id, as the record keeps it. */
  assistantId: string;
  /** New messages, a `Command` resuming an interrupt, or null (continue from the checkpoint). */
  input: RunInput;
  /** The run's typed settings (from `readRuntimeOptions`), passed unchanged to the agent factory. */
  settings: RunSettings;
  recursionLimit: number;
  /** Harness stream modes to publish (in the order requested). */
  streamModes: StreamMode[];
  /** Publish nested (subgraph) events too, named `mode|ns…`. Default false. */
  subgraphs?: boolean;
  /**
   * The run context the agent sees: identity (`thread_id`, `run_id`,
   * `user_id` are set by the service), the whitelisted request keys, and
   * request-scoped `secrets` (never stored: a resumed run runs without them).
   */
  context: Record<string, unknown>;
  configurable: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** Fork from (or resume at) this checkpoint. */
  checkpointId?: string;
  /** What to do when the thread already has a run (default `reject`). */
  strategy?: MultitaskStrategy;
  /** The request as the run record shows it (`{input, command, config, context}`), secrets already masked. */
  kwargs: Record<string, unknown>;
  /** What a streaming caller's disconnect does (the gateway reads it; default `cancel`). */
  onDisconnect?: "cancel" | "continue";
  /** Create this thread row with the run (the embedded client has no thread route). */
  createThread?: ThreadRecord;
  /**
   * In-process tap of the harness events, called synchronously before they
   * are published (the embedded client translates these). Only the
   * executing process sees it.
   */
  onEvent?: (event: StreamEvent) => void;
  /** Aborting it interrupts the run (the embedded client's caller signal). */
  signal?: AbortSignal;
  /**
   * False: publish nothing to the stream bridge (the caller follows the run
   * through `onEvent` only, and nobody can join it). Default true.
   */
  stream?: boolean;
  /**
   * Message ids already in the thread before the run. When given, a run that
   * ends without a result still records the messages it added (read from the
   * thread's state).
   */
  historicalIds?: ReadonlySet<string>;
}

/** How a run ended. `result` and `failure` are known only in the process that executed it. */
export interface RunEndState {
  runId: string;
  threadId: string;
  status: RunRecordStatus;
  error: string | null;
  /** The agent's result (absent when it never produced one). */
  result?: RunResult;
  /** What the run threw, if it threw. */
  failure?: unknown;
}

/** A run as its callers hold it: status, completion and its event stream. */
export interface RunHandle {
  readonly runId: string;
  readonly threadId: string;
  /** The status as this process knows it now. */
  readonly status: RunRecordStatus;
  /** What a streaming caller's disconnect does. */
  readonly onDisconnect: "cancel" | "continue";
  /** Settles with how the run ended (never rejects), as soon as its stream ended; its bookkeeping may still be committing. */
  readonly done: Promise<RunEndState>;
  /** Settles once the run's bookkeeping (record, transcript, thread, run hooks) was written, after `done` (never rejects). */
  readonly recorded: Promise<void>;
  /**
   * Follow the run's stream after `lastEventId` (null: from the oldest
   * retained event). Local events arrive synchronously; the stream ends with
   * `end` (or `gap`). Returns a function that stops the subscription.
   */
  subscribe(lastEventId: string | null, listener: StreamListener): () => void;
}
