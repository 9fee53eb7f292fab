import { DeerFlowError, RunServiceError } from "../errors";
import type { RunRecordStatus } from "../persistence";
import type { Agent, RunResult } from "../runtime";
import type { LocalRun } from "./local-run";
import type { CancelAction } from "./run-types";

/** The stream's and the record's error when a run's record could not be stored. */
export const STORE_FAILED = "Could not store the run";

/** The record's error of a run cancelled with `rollback`. */
export const ROLLED_BACK = "Rolled back by user";

/** Why a run stopped, as the service saw it (besides its result). */
export interface RunStopCause {
  /** The record could not be stored (the run is rolled back). */
  storeError?: unknown;
  cancelAction?: CancelAction;
  /** The run exceeded the run timeout (`timeoutMs` for the message). */
  timedOut?: boolean;
  timeoutMs?: number;
}

/** A run's final status, error text and the `error` event to publish (if any). */
export interface DecidedEnd {
  status: RunRecordStatus;
  error: string | null;
  /** Publish `error` with this payload before `end`. */
  event?: { message: string; name: string };
  /** Log this line (a failure the harness did not raise on purpose). */
  log?: string;
}

/**
 * Decide how a run ended, in the order the causes win: a failed record
 * store, a rollback, the timeout, an interrupt, a thrown failure, then the
 * agent's own result. `mask` rewrites host paths in texts that reach clients.
 */
export function decideEnd(result: RunResult | undefined, failure: unknown, cause: RunStopCause, mask: (text: string) => string): DecidedEnd {
  if (cause.storeError !== undefined) return { status: "error", error: STORE_FAILED, event: { message: STORE_FAILED, name: "StoreError" } };
  if (cause.cancelAction === "rollback") return { status: "error", error: ROLLED_BACK };
  if (cause.timedOut) return { status: "timeout", error: `Run exceeded ${cause.timeoutMs} ms` };
  // A cancel that came after the agent had returned (the run was ending) changes nothing: it finished.
  if (cause.cancelAction === "interrupt" && !(failure === undefined && result?.status === "success")) return { status: "interrupted", error: null };
  if (failure !== undefined) {
    const error = mask(failure instanceof Error ? failure.message : String(failure));
    const name = failure instanceof Error ? failure.name : "Error";
    return { status: "error", error, event: { message: error, name }, log: failure instanceof DeerFlowError ? undefined : `${name}: ${error}` };
  }
  if (!result) return { status: "error", error: "Run ended without a result" };
  if (result.status === "success") return { status: "success", error: null };
  if (result.status === "interrupted" || result.status === "cancelled") return { status: "interrupted", error: null };
  const error = mask(result.error?.message ?? "Run failed");
  return { status: "error", error, event: { message: error, name: result.error?.name ?? "Error" } };
}

/**
 * Refuse a cancel that waited for a run which ended on its own (it finished
 * before the cancel reached it): answered as for a finished run, DeerFlow's
 * "Run X is not cancellable (status: success)". A cancel's own ends pass.
 */
export function refuseLateCancel(runId: string, end: { status: RunRecordStatus; error: string | null } | undefined): void {
  if (!end || end.status === "interrupted" || (end.status === "error" && end.error === ROLLED_BACK)) return;
  throw notCancellable(runId, end.status);
}

/** `run_not_cancellable` in DeerFlow's words: "Run X is not cancellable (status: success)". */
export function notCancellable(runId: string, status: RunRecordStatus): RunServiceError {
  return new RunServiceError("run_not_cancellable", `Run ${runId} is not cancellable (status: ${status})`);
}

/**
 * What DeerFlow puts in a run's config metadata, from the built agent: it
 * reaches every `messages` event and checkpoint (`agent_name` is `default`
 * for the lead agent, as DeerFlow writes it).
 */
export function agentRunMetadata(agent: Agent): Record<string, unknown> {
  const meta = (agent as { metadata?: Record<string, unknown> }).metadata;
  if (!meta) return {};
  return { ls_integration: "langchain_create_agent", available_skills: null, ...meta, agent_name: meta.agent_name ?? "default" };
}

/** End a run whose record could not be stored: `error` with {@link STORE_FAILED} on its stream, then `end`. */
export function endUnstored(run: LocalRun): void {
  run.status = "error";
  void run.writer.then((w) => {
    w.publish("error", { message: STORE_FAILED, name: "StoreError" });
    return w.end();
  }, () => undefined);
  run.resolveDone({ runId: run.runId, threadId: run.threadId, status: "error", error: STORE_FAILED });
  run.resolveRecorded();
}
