import type { RunRecord, StateSnapshot } from "@deerflow-ts/harness";
import { publicStateValues } from "../security";

/**
 * The JSON answer of a finished run (`POST …/runs/wait`, `GET …/runs/{id}/join`), as LangGraph's API gives it: the
 * thread's values when the run completed, with `__interrupt__` when it paused on an interrupt; otherwise DeerFlow's
 * `{status, error}` plus LangGraph's `__error__ {error, message}`, which the SDKs' `raise_error` turns into an
 * exception on the caller's side.
 */
export function runAnswer(rec: RunRecord | undefined, snap: StateSnapshot | undefined): Record<string, unknown> {
  const status = rec?.status ?? "error";
  // a run that paused (an interrupt waits for its answer) completed its part; one the user stopped did not
  const paused = status === "interrupted" && !!snap && snap.interrupts.length > 0;
  if (status !== "success" && !paused) {
    const message = rec?.error ?? `Run ended with status ${status}`;
    return { status, error: rec?.error ?? null, __error__: { error: errorName(status), message } };
  }
  const values = publicStateValues((snap?.values ?? {}) as Record<string, unknown>);
  if (!snap?.interrupts.length) return values;
  return { ...values, __interrupt__: snap.interrupts.map((i) => ({ value: i.value, id: i.id })) };
}

/** The `__error__.error` of a run that did not complete: what kind of end it was. */
function errorName(status: string): string {
  if (status === "timeout") return "TimeoutError";
  if (status === "interrupted") return "RunInterrupted";
  return "RunError";
}
