import { isoNow } from "../clock";
import type { RunSettings } from "../deerflow-runtime/types";
import { emptyUsage, redactSecretKeys } from "../persistence";
import type { MultitaskStrategy, RunExecution, RunRecord } from "../persistence";
import type { StreamMode } from "../runtime";
import type { RunRequest } from "./run-types";

/**
 * The record of a new run: `running` when it starts at once (one write
 * instead of pending → running), else `pending`; with what resuming it
 * needs.
 */
export function newRunRecord(request: RunRequest, runId: string, context: Record<string, unknown>, strategy: MultitaskStrategy, running: boolean): RunRecord {
  const ts = isoNow();
  return {
    runId,
    threadId: request.threadId,
    userId: request.userId,
    assistantId: request.assistantId,
    status: running ? "running" : "pending",
    metadata: { ...request.metadata },
    kwargs: request.kwargs,
    multitaskStrategy: strategy,
    createdAt: ts,
    updatedAt: ts,
    usage: emptyUsage(),
    stopReason: null,
    error: null,
    modelName: request.settings.modelName ?? null,
    execution: executionOf(request, context),
  };
}

/**
 * The request that executes a stored run again (a takeover): from its
 * thread's last checkpoint (input null), with its stored settings and
 * without the request-scoped secrets it had.
 */
export function resumeRequest(record: RunRecord, execution: RunExecution): RunRequest {
  return {
    threadId: record.threadId,
    runId: record.runId,
    userId: record.userId,
    assistantId: record.assistantId,
    input: null,
    settings: execution.settings as unknown as RunSettings,
    recursionLimit: execution.recursionLimit,
    streamModes: execution.streamModes as StreamMode[],
    subgraphs: execution.subgraphs,
    context: execution.context,
    configurable: execution.configurable,
    metadata: record.metadata,
    strategy: record.multitaskStrategy,
    kwargs: record.kwargs,
  };
}

/** What resuming the run needs, kept with its record (request-scoped secrets left out). */
function executionOf(request: RunRequest, context: Record<string, unknown>): RunExecution {
  return {
    settings: request.settings as unknown as Record<string, unknown>,
    context: withoutSecrets(context),
    configurable: withoutSecrets(request.configurable),
    recursionLimit: request.recursionLimit,
    streamModes: request.streamModes,
    subgraphs: request.subgraphs === true,
  };
}

/** A context or `configurable` as a record may keep it: no `secrets`, secret-looking keys masked. */
function withoutSecrets(bag: Record<string, unknown>): Record<string, unknown> {
  const { secrets: _secrets, ...rest } = bag;
  return redactSecretKeys(rest) as Record<string, unknown>;
}
