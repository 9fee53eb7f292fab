import type { Message } from "../messages";

/**
 * How `messages` changed between a checkpoint and its parent. Each message
 * body is stored exactly once: in the checkpoint that added or replaced it.
 */
export type MessageOp =
  | { op: "add"; message: Message }
  | { op: "replace"; message: Message }
  | { op: "remove"; id: string }
  | { op: "clear" };

/** What changed in a checkpoint relative to its parent. */
export interface StateDelta {
  /** Message operations, applied in order. */
  messages?: MessageOp[];
  /** Channels (other than messages) whose value changed: the full new value. */
  values?: Record<string, unknown>;
}

/** Metadata LangGraph keeps on a checkpoint. */
export interface CheckpointMetadata {
  /** -1 for the input checkpoint, then 0, 1, 2… within the thread. */
  step: number;
  source: "input" | "loop" | "update" | "fork";
  run_id?: string;
  /** Node that wrote this checkpoint (`model`, `tools`, `<Middleware>.before_agent`…). */
  writer?: string;
  /** Pending interrupts (the run paused here). */
  interrupts?: Array<{ id: string; value: unknown; toolCallId?: string }>;
  [key: string]: unknown;
}

/** One stored checkpoint. */
export interface CheckpointRecord {
  threadId: string;
  checkpointId: string;
  parentId: string | null;
  /** ISO timestamp. */
  createdAt: string;
  metadata: CheckpointMetadata;
  delta: StateDelta;
}

/**
 * The lease claim a checkpoint write is made under: the run's id and the
 * epoch its owner got when it claimed the run's lease. A store that keeps
 * leases beside its checkpoints (PostgreSQL) refuses, in the write itself, a
 * write whose epoch is no longer the lease's (a `CheckpointError` with code
 * `checkpoint_stale_owner`): the run was taken over. Stores that share no
 * leases with other processes ignore it.
 */
export interface CheckpointFence {
  readonly runId: string;
  readonly epoch: number;
  /** Called once when a write under this fence was refused (so the owner stops at once, not at its next commit). */
  readonly onStale?: (error: Error) => void;
}

/** Options for listing checkpoints (newest first). */
export interface ListCheckpointOptions {
  limit?: number;
  /** Only checkpoints created before this checkpoint id (exclusive). */
  before?: string;
}

/**
 * A checkpoint store. Implementations persist records; state reconstruction
 * (walking deltas) is shared code, so every backend (memory, SQLite, later
 * PostgreSQL) stores the same linear data.
 */
export interface CheckpointStore {
  /**
   * Persist one checkpoint record. Must be atomic, and must refuse a record
   * whose `parentId` is not stored in the thread (a `CheckpointError` with code
   * `checkpoint_parent_missing`): writes are queued ahead of their commits, so
   * a child must never outlive a parent whose write failed. With a `fence`,
   * a store that keeps run leases refuses the write when the fence is stale.
   */
  put(record: CheckpointRecord, fence?: CheckpointFence): Promise<void>;
  /** The latest checkpoint of a thread (by creation order), or one by id. */
  get(threadId: string, checkpointId?: string): Promise<CheckpointRecord | undefined>;
  /**
   * The id of a thread's latest checkpoint, without reading the checkpoint
   * (optional: `get` is used without it). The checkpointer asks it at every
   * run start to check its cached state is still the head.
   */
  headId?(threadId: string): Promise<string | undefined>;
  /** The ancestry of a checkpoint, root first, ending with the checkpoint itself. */
  chain(threadId: string, checkpointId: string): Promise<CheckpointRecord[]>;
  /** Checkpoints of a thread, newest first. */
  list(threadId: string, options?: ListCheckpointOptions): Promise<CheckpointRecord[]>;
  /** Delete every checkpoint of a thread. */
  deleteThread(threadId: string): Promise<void>;
  /** Release resources. */
  close(): Promise<void>;
}
