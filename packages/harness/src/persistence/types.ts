/**
 * Persistence interfaces shared by the gateway and the embedded client:
 * thread metadata, run records and the persisted transcript. Every method is
 * async and no type mentions SQLite, so PostgreSQL can slot in behind the
 * same interfaces later.
 */

/** Statuses of a stored run record (LangGraph names). */
export type RunRecordStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";

/** Terminal run statuses. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunRecordStatus> = new Set(["success", "error", "timeout", "interrupted"]);

/** Multitask strategies accepted on run creation. */
export type MultitaskStrategy = "reject" | "interrupt" | "rollback" | "enqueue";

/** One thread's metadata row. */
export interface ThreadRecord {
  threadId: string;
  userId: string;
  /** `idle`, `running`, `error`, `interrupted`, `timeout`. */
  status: string;
  metadata: Record<string, unknown>;
  /** Sidebar title (copied from `values.title`). */
  displayName: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Filter of {@link ThreadStore.search}. */
export interface ThreadSearch {
  userId: string;
  /** Scalar equality on metadata keys. */
  metadata?: Record<string, unknown>;
  status?: string;
  limit: number;
  offset: number;
}

/** Thread metadata store. */
export interface ThreadStore {
  create(record: ThreadRecord): Promise<void>;
  get(threadId: string): Promise<ThreadRecord | undefined>;
  /** Write back changed fields (status, metadata, displayName, updatedAt). No-op for an unknown id. */
  update(threadId: string, patch: Partial<Omit<ThreadRecord, "threadId" | "createdAt">>): Promise<void>;
  delete(threadId: string): Promise<void>;
  /** Pinned first (`metadata.deerflow_pinned === true`), then `updatedAt` desc, then id desc. */
  search(filter: ThreadSearch): Promise<ThreadRecord[]>;
  /** Threads whose stored status is `running` (used for crash recovery). */
  listRunning(): Promise<ThreadRecord[]>;
}

/** Token accounting of one run. */
export interface RunUsage {
  totalInputTokens: number;
  totalOutputTokens: number;
  totalTokens: number;
  llmCallCount: number;
  leadAgentTokens: number;
  subagentTokens: number;
  middlewareTokens: number;
  messageCount: number;
}

/** One run record. */
export interface RunRecord {
  runId: string;
  threadId: string;
  userId: string;
  assistantId: string;
  status: RunRecordStatus;
  metadata: Record<string, unknown>;
  /** `{input, config}` with secrets removed. */
  kwargs: Record<string, unknown>;
  multitaskStrategy: MultitaskStrategy;
  createdAt: string;
  updatedAt: string;
  usage: RunUsage;
  stopReason: string | null;
  error: string | null;
  /** Model name used (from `context.model_name`), if any. */
  modelName: string | null;
  /**
   * What executing the run again needs when its process died (absent on
   * records written before the run service kept it). Written once, with the
   * record; request-scoped secrets are never part of it.
   */
  execution?: RunExecution | null;
}

/**
 * A run's execution settings as the run service stores them, so another
 * process can resume the run from its thread's last checkpoint: the typed
 * settings, the run context and `configurable` without request-scoped
 * secrets, and the stream shape.
 */
export interface RunExecution {
  /** The typed run settings (`RunSettings`: model, thinking, plan mode, agent, user…). */
  settings: Record<string, unknown>;
  /** The run context without `secrets`. */
  context: Record<string, unknown>;
  configurable: Record<string, unknown>;
  recursionLimit: number;
  /** The harness stream modes the run publishes. */
  streamModes: string[];
  /** Nested (subgraph) events are published too. */
  subgraphs: boolean;
  /**
   * The input of a run queued behind another (it is in no checkpoint yet),
   * so the process that takes a dead owner's queued run over can start it.
   * Absent for runs that started at once.
   */
  input?: StoredRunInput;
  /**
   * Names of the request-scoped secrets the run carried (never their
   * values): a run that had any is not executed again elsewhere without them.
   */
  secretNames?: string[];
}

/** A run input as a record keeps it: a state update, or a `Command` resuming an interrupt. */
export type StoredRunInput = { update: Record<string, unknown> } | { command: { resume?: unknown; goto?: unknown; update?: Record<string, unknown> } };

/**
 * The lease claim a run's owner writes its record under (shared backends):
 * a store that keeps the run leases beside the records writes the patch
 * only while the run's lease still has this epoch, and otherwise rejects
 * with `run_stale_owner` (another process took the run over and owns its
 * record). Stores without shared leases ignore it.
 */
export interface RunWriteFence {
  epoch: number;
}

/** Run record store. */
export interface RunStore {
  create(record: RunRecord): Promise<void>;
  get(runId: string): Promise<RunRecord | undefined>;
  /** No-op for an unknown id. With `fence`, see {@link RunWriteFence}. */
  update(runId: string, patch: Partial<Omit<RunRecord, "runId" | "threadId" | "createdAt">>, options?: { fence?: RunWriteFence }): Promise<void>;
  /** Runs of a thread, newest first. */
  listByThread(threadId: string): Promise<RunRecord[]>;
  deleteByThread(threadId: string): Promise<void>;
  /**
   * Mark every `pending`/`running` run as `error` with stop reason
   * `orphan_recovered` (the process died mid-run). Returns the affected runs.
   */
  recoverOrphans(now: string): Promise<RunRecord[]>;
}

/** One persisted transcript row (thread-global `seq`). */
export interface MessageRow {
  seq: number;
  threadId: string;
  runId: string;
  messageId: string;
  /** `human`, `ai`, `tool`, `system`. */
  messageType: string;
  content: Record<string, unknown>;
  createdAt: string;
}

/** Persisted transcript store. */
export interface MessageStore {
  /**
   * Insert messages not stored yet (by message id) under `runId`; a stored
   * message with the same id has its content replaced, keeping its seq and
   * run. Messages without an id are ignored.
   */
  record(threadId: string, runId: string, messages: Array<Record<string, unknown>>, createdAt: string): Promise<void>;
  /** Rows with `seq < beforeSeq` (all when undefined), newest `limit` rows, returned ascending. */
  page(threadId: string, options: { limit: number; beforeSeq?: number }): Promise<{ rows: MessageRow[]; hasMore: boolean }>;
  /** Message id → run id, for the whole thread. */
  runIds(threadId: string): Promise<Map<string, string>>;
  deleteByThread(threadId: string): Promise<void>;
}

/** The three stores over one database, as the gateway and the client open them. */
export interface PersistenceStores {
  threads: ThreadStore;
  runs: RunStore;
  messages: MessageStore;
  /** Release what the opener owns (a database handed in stays open). */
  close(): Promise<void>;
}
