/**
 * What a run produced besides its state: why it stopped, the tokens it used
 * (split by who spent them) and the error that ended it. The runtime owns one
 * recorder per run and hands it to middlewares (`runtime.outcome`) and tools
 * (`toolRuntime.outcome`); gateway, client and CLI read only
 * `RunResult.outcome`. Nothing travels through the mutable run context, so a
 * copy of the context can never lose an outcome.
 */

/** Token counts. */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Usage of one caller (the agent's own model calls, sub-agents, middlewares). */
export interface CallerUsage extends UsageTotals {
  /** Model calls (or delegated runs) counted for this caller. */
  calls: number;
}

/** The error that ended an otherwise completed run (e.g. an LLM failure turned into a message). */
export interface RunOutcomeError {
  type: string;
  reason: string;
}

/** The typed outcome of a run. */
export interface RunOutcome {
  /** `loop_capped`, `token_capped`, `safety_capped`, `model_length_capped`, … or null. */
  stopReason: string | null;
  /** Sum over every caller; `llm_call_count` counts the agent's own model calls. */
  usage: UsageTotals & { llm_call_count: number };
  /** Keyed by caller: {@link AGENT_CALLER}, `subagent:<type>`, `middleware:<name>`. */
  usageByCaller: Record<string, CallerUsage>;
  error: RunOutcomeError | null;
  /** Typed reports of subsystems (e.g. `memory` → the facts injected); each key is owned by one subsystem. */
  reports: Record<string, unknown>;
}

/** The caller name of an agent's own model calls. */
export const AGENT_CALLER = "lead_agent";

/** How middlewares and tools report into the run's outcome. */
export interface RunOutcomeRecorder {
  readonly stopReason: string | null;
  readonly error: RunOutcomeError | null;
  /** Record why the run stopped. By default the first reason wins (`overwrite` replaces it). */
  setStopReason(reason: string, options?: { overwrite?: boolean }): void;
  /** Mark the run as failed although its loop completed. The first error wins. */
  setError(error: RunOutcomeError): void;
  /**
   * Add usage for a caller; `calls` (default 1) model calls or delegated
   * runs. Only the agent caller adds to `usage.llm_call_count`.
   */
  recordUsage(caller: string, usage: Partial<UsageTotals> | null | undefined, options?: { calls?: number }): void;
  /** Attach a subsystem's report (replaces the previous value under that key). */
  report(key: string, value: unknown): void;
  /** A copy of the outcome so far. */
  snapshot(): RunOutcome;
}

function count(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0;
}

/** An empty outcome. */
export function emptyRunOutcome(): RunOutcome {
  return { stopReason: null, usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, llm_call_count: 0 }, usageByCaller: {}, error: null, reports: {} };
}

// A class, not an object literal of closures: one is made per run (and per sub-agent run), and its methods are
// then shared instead of allocated with each recorder.
class OutcomeRecorder implements RunOutcomeRecorder {
  private readonly o: RunOutcome = emptyRunOutcome();

  get stopReason(): RunOutcome["stopReason"] {
    return this.o.stopReason;
  }

  get error(): RunOutcome["error"] {
    return this.o.error;
  }

  setStopReason(reason: NonNullable<RunOutcome["stopReason"]>, options?: { overwrite?: boolean }): void {
    if (this.o.stopReason === null || options?.overwrite) this.o.stopReason = reason;
  }

  setError(error: NonNullable<RunOutcome["error"]>): void {
    this.o.error ??= { type: error.type, reason: error.reason };
  }

  recordUsage(caller: string, usage: Parameters<RunOutcomeRecorder["recordUsage"]>[1], options?: { calls?: number }): void {
    const o = this.o;
    const input = count(usage?.input_tokens);
    const output = count(usage?.output_tokens);
    const total = count(usage?.total_tokens) || input + output;
    const calls = options?.calls ?? 1;
    const c = (o.usageByCaller[caller] ??= { input_tokens: 0, output_tokens: 0, total_tokens: 0, calls: 0 });
    c.input_tokens += input;
    c.output_tokens += output;
    c.total_tokens += total;
    c.calls += calls;
    o.usage.input_tokens += input;
    o.usage.output_tokens += output;
    o.usage.total_tokens += total;
    if (caller === AGENT_CALLER) o.usage.llm_call_count += calls;
  }

  report(key: string, value: unknown): void {
    this.o.reports[key] = value;
  }

  snapshot(): RunOutcome {
    const o = this.o;
    return {
      stopReason: o.stopReason,
      usage: { ...o.usage },
      usageByCaller: Object.fromEntries(Object.entries(o.usageByCaller).map(([k, v]) => [k, { ...v }])),
      error: o.error ? { ...o.error } : null,
      reports: { ...o.reports },
    };
  }
}

/** A fresh recorder for one run. */
export function createRunOutcomeRecorder(): RunOutcomeRecorder {
  return new OutcomeRecorder();
}

/** Tokens of callers whose name starts with `prefix` (e.g. `subagent`). */
export function callerTokens(outcome: RunOutcome, prefix: string): number {
  let n = 0;
  for (const [caller, u] of Object.entries(outcome.usageByCaller)) {
    if (caller === prefix || caller.startsWith(`${prefix}:`)) n += u.total_tokens;
  }
  return n;
}
