import { RunCancelledError } from "../errors";
import { isAbortError, isGraphInterrupt } from "../runtime";

/**
 * True for the runtime's interrupt signal (a human-in-the-loop pause). Such
 * errors are control flow, not failures: middlewares must re-throw them.
 */
export function isInterruptError(err: unknown): boolean {
  return isGraphInterrupt(err) || (err instanceof Error && (err.name === "GraphBubbleUp" || err.name === "ParentCommand"));
}

/** True for a cancellation: an `AbortError`, a {@link RunCancelledError}, or any error once `signal` is aborted. */
export function isCancellationError(err: unknown, signal?: AbortSignal): boolean {
  return err instanceof RunCancelledError || isAbortError(err) || !!signal?.aborted;
}

/** True when `err` must propagate through error-handling middlewares (interrupt or cancellation). */
export function isControlFlowError(err: unknown, signal?: AbortSignal): boolean {
  return isInterruptError(err) || isCancellationError(err, signal);
}
