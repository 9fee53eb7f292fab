import type { CheckpointRecord } from "../checkpoints/types";
import type { RunSettings } from "../deerflow-runtime/types";
import type { PersistenceStores } from "../persistence";
import type { Agent, StateSnapshot, StreamMode } from "../runtime";
import type { RunBackends } from "./backend-types";
import type { RunRecorder } from "./run-recorder";

/** What the run service runs on: the runtime's stores, recorder, agents and state. */
export interface RunHost {
  readonly stores: PersistenceStores;
  readonly recorder: RunRecorder;
  readonly checkpointer: {
    deleteThread(threadId: string): Promise<void>;
    /** Checkpoint records of a thread, newest first, with full metadata (a dead owner's run is rolled back from them). */
    list(threadId: string, options?: { limit?: number; before?: string }): Promise<CheckpointRecord[]>;
  };
  buildAgent(settings: Partial<RunSettings>): Promise<Agent>;
  readState(threadId: string, checkpointId?: string): Promise<StateSnapshot | undefined>;
  updateState(threadId: string, update: Record<string, unknown>, options?: { checkpointId?: string; asNode?: string }): Promise<unknown>;
}

/** How a server presents runs (set with `RunService.configure`). */
export interface RunPolicy {
  /** The public form of an event payload (a server rewrites host paths in state). */
  eventData?: (mode: StreamMode, data: unknown) => unknown;
  /** Rewrite texts that reach clients (run errors name the files they touched). */
  maskError?: (text: string) => string;
  /** Mark a run `timeout` after this long (default: none). */
  runTimeoutMs?: number;
  /** Prefix of the service's log lines (default `[runs]`). */
  logPrefix?: string;
  /**
   * With the in-memory bridge: the events retained per run and how long a
   * finished run's stream stays joinable (a one-process server keeps this
   * short: the memory is its own). Ignored with a shared bridge.
   */
  memoryReplay?: { queueMaxsize: number; ttlSeconds: number };
}

/** Options of `RunService`. */
export interface RunServiceOptions {
  host: RunHost;
  backends: RunBackends;
  log: (message: string) => void;
  /** Epoch ms (tests pass a clock they control for leases). */
  clock?: () => number;
}
