import { isoNow } from "../clock";
import type { RunSettings } from "../deerflow-runtime/types";
import { emptyUsage, redactSecretKeys } from "../persistence";
import type { MultitaskStrategy, RunExecution, RunRecord, StoredRunInput } from "../persistence";
import type { RunInput, StreamMode } from "../runtime";
import { RunSecrets } from "../runtime/run-context";
import { Command } from "../state";
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
    execution: executionOf(request, context, !running),
  };
}

/**
 * The request that executes a stored run again (a takeover), with its
 * stored settings: from its thread's last checkpoint (input null), or, with
 * `replayInput`, from its stored input (a queued run that never committed
 * it). A run that carried request-scoped secrets is never rebuilt: the
 * caller refuses it first (see {@link carriedSecrets}).
 */
export function resumeRequest(record: RunRecord, execution: RunExecution, replayInput = false): RunRequest {
  return {
    threadId: record.threadId,
    runId: record.runId,
    userId: record.userId,
    assistantId: record.assistantId,
    input: replayInput && execution.input ? restoreInput(execution.input) : null,
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

/** The names of the request-scoped secrets a stored run carried (empty: none). */
export function carriedSecrets(execution: RunExecution): string[] {
  return execution.secretNames ?? [];
}

/**
 * What resuming the run needs, kept with its record: request-scoped secrets
 * left out (only their names are kept, to refuse running without them), and
 * the input of a queued run (no checkpoint holds it yet).
 */
function executionOf(request: RunRequest, context: Record<string, unknown>, queued: boolean): RunExecution {
  const secretNames = RunSecrets.from(context.secrets).names();
  const input = queued ? storedInput(request.input) : undefined;
  return {
    settings: request.settings as unknown as Record<string, unknown>,
    context: withoutSecrets(context),
    configurable: withoutSecrets(request.configurable),
    recursionLimit: request.recursionLimit,
    streamModes: request.streamModes,
    subgraphs: request.subgraphs === true,
    ...(input ? { input } : {}),
    ...(secretNames.length ? { secretNames } : {}),
  };
}

/** A run input as plain data (a `Command` by its fields). */
function storedInput(input: RunInput): StoredRunInput | undefined {
  if (input === null || input === undefined) return undefined;
  if (input instanceof Command) {
    const { resume, goto, update } = input;
    return { command: { ...(resume !== undefined ? { resume } : {}), ...(goto !== undefined ? { goto } : {}), ...(Object.keys(update).length ? { update: update as Record<string, unknown> } : {}) } };
  }
  return { update: input as Record<string, unknown> };
}

function restoreInput(stored: StoredRunInput): RunInput {
  if ("command" in stored) return new Command(stored.command as ConstructorParameters<typeof Command>[0]);
  return stored.update as RunInput;
}

/** A context or `configurable` as a record may keep it: no `secrets`, secret-looking keys masked. */
function withoutSecrets(bag: Record<string, unknown>): Record<string, unknown> {
  const { secrets: _secrets, ...rest } = bag;
  return redactSecretKeys(rest) as Record<string, unknown>;
}
