import { errorMessage } from "../errors";
import type { RunResult } from "../runtime";
import type { RunBackends } from "./backend-types";
import { endTakenOver, isTakenOver, recordFence } from "./lease-keeper";
import { SILENT_WRITER } from "./local-run";
import type { LocalRun } from "./local-run";
import { decideEnd } from "./run-end";
import type { RunHost, RunPolicy } from "./run-host";
import { rollbackThread } from "./run-rollback";

/** What ending a run takes from the run service. */
export interface RunFinishContext {
  readonly host: RunHost;
  readonly backends: RunBackends;
  readonly policy: RunPolicy;
  /** Logs one line (prefixed by the service). */
  log(message: string): void;
  /** True when the run is its thread's active run here. */
  isActive(run: LocalRun): boolean;
  /** True when a run is queued here behind it on its thread. */
  hasQueued(threadId: string): boolean;
  /** Free the run's local slot (the next queued run starts), its lease and its thread's slot across processes. */
  release(run: LocalRun, wasActive: boolean): Promise<void>;
}

/**
 * End a run: decide its status, publish its `error` (if any), roll it back
 * when asked, write its bookkeeping, free its slots and end its stream. A
 * run another process owns now (a lost lease, a refused fenced write) stops
 * here without an end of its own: the new owner writes it.
 */
export async function finishRun(run: LocalRun, result: RunResult | undefined, failure: unknown, at: RunFinishContext): Promise<void> {
  const { host, backends, policy } = at;
  run.ending = true;
  run.lease?.stop();
  // Settled by now unless the run wrote nothing (its writes commit after its record).
  const storeError = await run.stored.then(() => undefined, (err: unknown) => err ?? new Error("store failed"));
  const mask = policy.maskError ?? ((t: string) => t);
  const end = decideEnd(result, run.streamError ?? failure, { storeError, cancelAction: run.cancelAction, timedOut: run.timedOut, timeoutMs: policy.runTimeoutMs }, mask);
  const writer = await run.writer.catch(() => SILENT_WRITER);
  // A refused fenced checkpoint write or stream append says the same as a refused renewal: another process owns it.
  if (isTakenOver(run.streamError) || isTakenOver(failure) || isTakenOver(result?.error)) run.leaseLost = true;
  if (run.leaseLost) {
    // The new owner continues the run, its stream and record; runs queued here behind it wait for its slot.
    void at.release(run, at.isActive(run));
    endTakenOver(run, writer, result, failure);
    return;
  }
  if (end.event) writer.publish("error", end.event);
  if (end.log) at.log(`run ${run.runId} failed: ${end.log}`);
  // A run that never loaded its thread, or has no stored record, left nothing behind to roll back.
  const rolledBack = run.cancelAction === "rollback" || storeError !== undefined;
  if (rolledBack && result && result.startCheckpointId !== undefined) {
    await rollbackThread(host, run.threadId, result.startCheckpointId).catch((err: unknown) => at.log(`rollback of run ${run.runId} failed: ${errorMessage(err)}`));
  }
  // On shared backends the stream holds everything but its end marker before the record says the run ended: a
  // client of another process that finds the record ended and no stream knows the stream is gone, not yet to come.
  if (backends.shared) await writer.flush().catch(() => undefined);
  run.status = end.status;
  const wasActive = at.isActive(run);
  const next = wasActive && at.hasQueued(run.threadId);
  // The bookkeeping is queued before the stream ends: this process's stores commit pending writes before any read,
  // so a client reading the run right after `end` sees them. On shared backends `end` waits for the commit too:
  // another process reads the database only, and a client may read there on `end`.
  const historicalIds = run.request.historicalIds;
  const bookkeeping = host.recorder.finish({
    runId: run.runId,
    threadId: run.threadId,
    userId: run.userId,
    status: end.status,
    error: end.error,
    result,
    rolledBack,
    threadStatus: wasActive ? (next ? "running" : end.status === "success" ? "idle" : end.status) : null,
    agentName: run.request.settings.agentName ?? null,
    ...(historicalIds ? { historicalIds, readState: async () => (await host.readState(run.threadId))?.values } : {}),
    ...recordFence(run, backends.shared),
  });
  if (backends.shared) {
    // The record is written under the run's lease claim, and the lease and thread slot are given back only once
    // it committed: a stale owner (another process took the run over meanwhile) changes neither, and stops here as
    // taken over. The thread's slot is free before `end` reaches a client: a client that sends its next message
    // on `end` finds the thread free on whichever process it reaches.
    if ((await bookkeeping.written).staleOwner) {
      run.leaseLost = true;
      void at.release(run, wasActive);
      endTakenOver(run, writer, result, failure);
      return;
    }
    await at.release(run, wasActive);
  } else void at.release(run, wasActive);
  const ended = writer.end().catch((err: unknown) => at.log(`could not end the stream of run ${run.runId}: ${errorMessage(err)}`));
  run.resolveDone({ runId: run.runId, threadId: run.threadId, status: end.status, error: end.error, result, failure });
  await Promise.all([bookkeeping, ended]);
  run.resolveRecorded();
}
