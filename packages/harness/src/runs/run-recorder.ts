import { isoNow } from "../clock";
import { errorMessage, hasErrorCode } from "../errors";
import type { Message } from "../messages";
import { messagesChangedByRun, runUsageFromMessages, runUsageFromOutcome } from "../persistence";
import type { PersistenceStores, RunRecord, RunRecordStatus, RunUsage, RunWriteFence, ThreadRecord } from "../persistence";
import type { RunResult } from "../runtime";
import type { AgentState } from "../state";

/** How a run ended, as the run service decided. */
export interface RunEnd {
  runId: string;
  threadId: string;
  userId: string;
  status: RunRecordStatus;
  error: string | null;
  /** The run's result; absent when it never produced one (cancelled before start, crashed). */
  result?: RunResult;
  /**
   * Without a result: reads the thread's state, so the messages the run added
   * (ids not in `historicalIds`) still reach the transcript.
   */
  readState?: () => Promise<AgentState | undefined>;
  historicalIds?: ReadonlySet<string>;
  /** The run was rolled back: its messages are gone, only the record is updated. */
  rolledBack?: boolean;
  /** Status to write on the thread row; default `idle` after success, else the run's status; `null` leaves it. */
  threadStatus?: string | null;
  /** The run's agent (`lead_agent` or a custom agent's name), for hooks. */
  agentName?: string | null;
  /** The owner's lease claim the record is written under (see {@link RunWriteFence}). */
  fence?: RunWriteFence;
}

/** How a run's end was written. */
export interface RunEndWritten {
  /** The run store refused the record as written by a stale owner: another process owns the run (and its end). */
  staleOwner: boolean;
}

/** What run hooks see when a run finished (after its bookkeeping was queued). */
export interface FinishedRun {
  runId: string;
  threadId: string;
  userId: string;
  status: RunRecordStatus;
  agentName: string | null;
  /** The final state (absent without a result). */
  state?: AgentState;
  result?: RunResult;
}

/** What run hooks see when a run starts. */
export interface StartedRun {
  runId: string;
  threadId: string;
  userId: string;
}

/** Subsystems that follow runs (workspace snapshots, memory queue). Failures are logged, never fatal. */
export interface RunHook {
  readonly name: string;
  runStarted?(run: StartedRun): void | Promise<void>;
  runFinished?(run: FinishedRun): void | Promise<void>;
}

/**
 * The one place a run's bookkeeping is written, for the gateway and the
 * embedded client alike: the run record (status, usage by caller, stop
 * reason, error), the transcript rows of the messages the run added or
 * replaced, and the thread's title and status.
 */
export class RunRecorder {
  private readonly hooks: RunHook[] = [];

  constructor(
    private readonly stores: PersistenceStores,
    private readonly log: (message: string) => void,
  ) {}

  /** Follow runs (see {@link RunHook}). */
  addHook(hook: RunHook): void {
    this.hooks.push(hook);
  }

  /**
   * Store a new run record and mark its thread running; `createThread`
   * creates the thread row first (the embedded client has no thread route).
   * The writes are queued in this order when the call returns.
   */
  begin(record: RunRecord, options: { createThread?: ThreadRecord } = {}): Promise<void> {
    const writes: Array<Promise<unknown>> = [];
    if (options.createThread) writes.push(this.stores.threads.create(options.createThread));
    writes.push(this.stores.runs.create(record));
    if (!options.createThread) writes.push(this.stores.threads.update(record.threadId, { status: "running", updatedAt: record.createdAt }));
    return Promise.all(writes).then(() => undefined);
  }

  /** Tell hooks that a stored run starts executing. */
  started(run: StartedRun): Promise<void> {
    return this.callHooks("runStarted", run);
  }

  /**
   * Write a finished run's bookkeeping. With a result the writes are queued
   * synchronously (stores commit pending writes before any read, so a client
   * reading right after the stream's `end` sees them); the returned promise
   * settles when they committed and the hooks ran, its `written` once the
   * writes committed (before the hooks). Never rejects: failures are logged.
   */
  finish(end: RunEnd): Promise<void> & { readonly written: Promise<RunEndWritten> } {
    let markWritten!: (w: RunEndWritten) => void;
    const written = new Promise<RunEndWritten>((r) => (markWritten = r));
    return Object.assign(this.finishWrites(end, markWritten), { written });
  }

  private finishWrites(end: RunEnd, markWritten: (w: RunEndWritten) => void): Promise<void> {
    const writes: Array<Promise<unknown>> = [];
    const outcome: RunEndWritten = { staleOwner: false };
    const record = (usage: RunUsage, transcript: Message[], title: string | undefined): void => {
      const ts = isoNow();
      if (transcript.length) writes.push(this.stores.messages.record(end.threadId, end.runId, transcript as unknown as Array<Record<string, unknown>>, ts));
      if (title) writes.push(this.stores.threads.update(end.threadId, { displayName: title }));
      const stopReason = end.result?.outcome.stopReason ?? null;
      const patch = { status: end.status, error: end.error, usage, stopReason, updatedAt: ts };
      const threadStatus = end.threadStatus === undefined ? (end.status === "success" ? "idle" : end.status) : end.threadStatus;
      const writeThread = () => (threadStatus === null ? undefined : this.stores.threads.update(end.threadId, { status: threadStatus, updatedAt: ts }));
      if (!end.fence) {
        writes.push(this.stores.runs.update(end.runId, patch));
        const t = writeThread();
        if (t) writes.push(t);
        return;
      }
      // Under the owner's lease claim, and the thread's status only once the record took it: a stale owner's late
      // end changes neither the record nor the thread of the run another process owns now.
      writes.push(
        this.stores.runs.update(end.runId, patch, { fence: end.fence }).then(
          () => writeThread(),
          (err: unknown) => {
            if (!hasErrorCode(err, "run_stale_owner")) throw err;
            outcome.staleOwner = true;
            this.log(`[deerflow] the end of run ${end.runId} was not recorded: ${errorMessage(err)}`);
          },
        ),
      );
    };
    const settle = (): Promise<void> =>
      Promise.all(writes.map((w) => w.catch((err: unknown) => this.log(`[deerflow] bookkeeping of run ${end.runId} failed: ${errorMessage(err)}`)))).then(() =>
        markWritten(outcome),
      );

    const result = end.result;
    if (end.rolledBack) {
      record(result ? runUsageFromOutcome(result.outcome, [], new Set()) : runUsageFromMessages([], new Set()), [], undefined);
      return settle().then(() => this.notify(end, undefined));
    }
    if (result && result.startCheckpointId !== undefined) {
      // The run loaded its thread: what changed is what differs from the state it started from.
      const state = result.state as AgentState;
      const messages = (state.messages ?? []) as Message[];
      const startMessages = (result.startState?.messages ?? []) as Message[];
      const before = new Set(startMessages.map((m) => m.id).filter((x): x is string => !!x));
      const title = typeof state.title === "string" && state.title && state.title !== result.startState?.title ? state.title : undefined;
      record(runUsageFromOutcome(result.outcome, messages, before), messagesChangedByRun(messages, startMessages), title);
      return settle().then(() => this.notify(end, state));
    }
    if (result) {
      // Ended before loading its thread (or ephemeral): it changed nothing.
      record(runUsageFromOutcome(result.outcome, [], new Set()), [], undefined);
      return settle().then(() => this.notify(end, undefined));
    }
    return (async () => {
      let state: AgentState | undefined;
      let usage = runUsageFromMessages([], new Set());
      let transcript: Message[] = [];
      let title: string | undefined;
      try {
        state = await end.readState?.();
        const historical = end.historicalIds ?? new Set<string>();
        const messages = (state?.messages ?? []) as Message[];
        usage = runUsageFromMessages(messages, historical);
        transcript = messages.filter((m) => !(m.id && historical.has(m.id)));
        if (typeof state?.title === "string" && state.title) title = state.title;
      } catch (err) {
        this.log(`[deerflow] could not read the state of run ${end.runId}: ${errorMessage(err)}`);
      }
      record(usage, transcript, title);
      await settle();
      await this.notify(end, state);
    })();
  }

  private notify(end: RunEnd, state: AgentState | undefined): Promise<void> {
    return this.callHooks("runFinished", {
      runId: end.runId,
      threadId: end.threadId,
      userId: end.userId,
      status: end.status,
      agentName: end.agentName ?? null,
      state,
      result: end.result,
    });
  }

  private async callHooks<K extends "runStarted" | "runFinished">(kind: K, arg: Parameters<NonNullable<RunHook[K]>>[0]): Promise<void> {
    for (const hook of this.hooks) {
      const fn = hook[kind] as ((a: typeof arg) => void | Promise<void>) | undefined;
      if (!fn) continue;
      try {
        await fn.call(hook, arg);
      } catch (err) {
        this.log(`[deerflow] run hook '${hook.name}' (${kind}) failed: ${errorMessage(err)}`);
      }
    }
  }
}
