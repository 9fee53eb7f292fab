import { TERMINAL_RUN_STATUSES } from "../persistence";
import type { RunRecord, RunRecordStatus } from "../persistence";
import type { RunStreamWriter, StreamBridge } from "./backend-types";
import type { LeaseKeeper } from "./lease-keeper";
import type { CancelAction, RunEndState, RunHandle, RunRequest } from "./run-types";

/** A run this process executes or has queued, as the run service tracks it until it ended. */
export interface LocalRun extends RunHandle {
  status: RunRecordStatus;
  readonly userId: string;
  readonly request: RunRequest;
  readonly record: RunRecord;
  readonly controller: AbortController;
  /** Resolves with the run's stream writer once it is open (its `metadata` event is the first). */
  readonly writer: Promise<RunStreamWriter>;
  /** Settles once the record is stored (resumed runs: at once). */
  readonly stored: Promise<void>;
  readonly resumed: boolean;
  cancelAction?: CancelAction;
  timedOut: boolean;
  started: boolean;
  /** Its agent returned (or it never ran): only its end is left to write, a cancel can no longer stop it. */
  ending?: boolean;
  /** Waiting for another process to free the thread's slot (shared backends). */
  remoteWait: boolean;
  leaseLost: boolean;
  /** The run's event stream failed (its backend is down): the run is stopped and ends as `error`. */
  streamError?: unknown;
  holdsLease: boolean;
  /** The epoch of this process's claim of the run's lease, when its leases have epochs (the fence of its checkpoint writes). */
  leaseEpoch?: number;
  /** Until when (epoch ms) no other process can have taken the lease over: its last confirmed expiry plus grace. */
  leaseSafeUntil?: number;
  /** Holds and renews the run's lease (shared backends, or `run_ownership.heartbeat_enabled`). */
  lease?: LeaseKeeper;
  resolveDone(end: RunEndState): void;
  resolveRecorded(): void;
}

/** A writer for runs that publish nothing (their events go to `onEvent` only). */
export const SILENT_WRITER: RunStreamWriter = { publish: () => "", end: () => Promise.resolve(), flush: () => Promise.resolve() };

/** Statuses after which a run changes no more. */
export const TERMINAL = TERMINAL_RUN_STATUSES;

/** A new local run (queued or active: the caller places it). */
export function createLocalRun(
  request: RunRequest,
  record: RunRecord,
  parts: { stored: Promise<void>; writer: Promise<RunStreamWriter>; resumed: boolean },
  bridge: StreamBridge,
): LocalRun {
  let resolveDone!: (end: RunEndState) => void;
  const done = new Promise<RunEndState>((r) => (resolveDone = r));
  let resolveRecorded!: () => void;
  const recorded = new Promise<void>((r) => (resolveRecorded = r));
  return {
    runId: record.runId,
    threadId: record.threadId,
    userId: record.userId,
    onDisconnect: request.onDisconnect ?? "cancel",
    done,
    recorded,
    status: record.status,
    request,
    record,
    controller: new AbortController(),
    writer: parts.writer,
    stored: parts.stored,
    resumed: parts.resumed,
    timedOut: false,
    started: false,
    remoteWait: false,
    leaseLost: false,
    holdsLease: false,
    resolveDone,
    resolveRecorded,
    subscribe: (lastEventId, listener) => bridge.subscribe(record.runId, lastEventId, listener),
  };
}
