import { errorMessage, GraphRecursionError, hasErrorCode } from "../errors";
import { contentText } from "../messages";
import type { AIMessage, Message } from "../messages";
import type { Agent, AgentMiddleware, RunResult } from "../runtime/types";
import { releaseRunSandbox } from "../sandbox";
import type { AgentState } from "../state";
import { sharedSubagentAdmission } from "./admission";
import type { SubagentAdmission } from "./admission";
import type { RunChildFn } from "./run-child";
import type { SubagentStopReasonValue, SubagentTokenUsage } from "./status-contract";
import { SUBAGENT_STOP_REASON_VALUES } from "./status-contract";
import type { SubagentResult } from "./types";

/** How long a cancelled or timed-out child may take to wind down before the parent stops waiting. */
export const CHILD_STOP_GRACE_MS = 2000;

/** Error text of a parent-cancelled child. */
export const SUBAGENT_CANCELLED_ERROR = "Cancelled by user";

/** Options of one {@link SubagentExecutor.execute}. */
export interface ExecuteSubagentOptions {
  /** The dispatching tool-call id. */
  taskId: string;
  /** Build the child agent; `middleware` (the turn cap and the progress probe) must be placed FIRST in its chain. */
  buildAgent(middleware: AgentMiddleware[]): Agent | Promise<Agent>;
  /** The child's first messages (snapshot, task). */
  messages: Message[];
  /** Extra starting state (the parent's `sandbox`, `thread_data`). */
  initialState?: Partial<AgentState>;
  maxTurns: number;
  timeoutSeconds: number;
  /** The parent's cancellation. */
  signal: AbortSignal;
  /** Starts the nested run (the runtime's `runChild`, bound to the parent tool call). */
  runChild: RunChildFn;
  /** Called once per new AI message of the child, with the cumulative usage so far. */
  onAiMessage?(message: AIMessage, index: number, usage: SubagentTokenUsage): void;
  /** Called once the child holds an admission slot (it starts running). */
  onStart?(): void;
}

/** Options of {@link SubagentExecutor}. */
export interface SubagentExecutorOptions {
  /** Process-wide admission gate (default: the shared one). */
  admission?: SubagentAdmission;
  /** Grace period for a stopping child (default {@link CHILD_STOP_GRACE_MS}). */
  stopGraceMs?: number;
}

function addUsage(total: SubagentTokenUsage, m: AIMessage): void {
  const u = m.usage_metadata;
  if (!u) return;
  total.input_tokens += u.input_tokens ?? 0;
  total.output_tokens += u.output_tokens ?? 0;
  total.total_tokens += u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0);
}

function lastAi(messages: readonly Message[] | undefined): AIMessage | undefined {
  if (!messages) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].type === "ai") return messages[i] as AIMessage;
  return undefined;
}

function guardStopReason(v: unknown): SubagentStopReasonValue | undefined {
  return typeof v === "string" && (SUBAGENT_STOP_REASON_VALUES as readonly string[]).includes(v) ? (v as SubagentStopReasonValue) : undefined;
}

/** First terminal status wins: later outcomes (a late child result after a timeout) are ignored. */
class TerminalLatch {
  value?: Pick<SubagentResult, "status" | "result" | "error" | "stopReason">;
  set(v: NonNullable<TerminalLatch["value"]>): boolean {
    if (this.value) return false;
    this.value = v;
    return true;
  }
}

/**
 * Runs sub-agents: admission (process-wide FIFO), a cap on MODEL turns, a
 * wall-clock timeout with cooperative cancel, parent cancellation, and the
 * mapping of the child's run into one terminal {@link SubagentResult}. It
 * never throws and never leaves the parent waiting on a child that ignores
 * its abort signal (after the grace period the parent goes on).
 */
export class SubagentExecutor {
  readonly admission: SubagentAdmission;
  private readonly graceMs: number;

  constructor(options: SubagentExecutorOptions = {}) {
    this.admission = options.admission ?? sharedSubagentAdmission();
    this.graceMs = options.stopGraceMs ?? CHILD_STOP_GRACE_MS;
  }

  async execute(o: ExecuteSubagentOptions): Promise<SubagentResult> {
    const startedAt = Date.now();
    const latch = new TerminalLatch();
    const usage: SubagentTokenUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    const aiMessages: AIMessage[] = [];
    const seen = new Set<string>();
    let modelCalls = 0;
    let turnCapped = false;
    let guardReason: SubagentStopReasonValue | undefined;
    let finalState: AgentState | undefined;
    const finish = (): SubagentResult => ({
      taskId: o.taskId,
      ...(latch.value as NonNullable<TerminalLatch["value"]>),
      aiMessages,
      usage: { ...usage },
      modelCalls,
      finalState,
      startedAt,
      completedAt: Date.now(),
    });

    let release: (() => void) | undefined;
    try {
      release = await this.admission.acquire(o.signal);
    } catch {
      latch.set({ status: "cancelled", error: SUBAGENT_CANCELLED_ERROR });
      return finish();
    }
    const child = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const onParentAbort = () => {
      if (latch.set({ status: "cancelled", error: SUBAGENT_CANCELLED_ERROR })) child.abort(new Error(SUBAGENT_CANCELLED_ERROR));
    };
    try {
      if (o.signal.aborted) onParentAbort();
      else o.signal.addEventListener("abort", onParentAbort, { once: true });
      const timeoutMs = Math.max(1, o.timeoutSeconds * 1000);
      timer = setTimeout(() => {
        const error = `Execution timed out after ${o.timeoutSeconds} seconds`;
        if (latch.set({ status: "timed_out", error })) child.abort(new Error(error));
      }, timeoutMs);
      o.onStart?.();

      // The probe is the first middleware: its beforeModel sees the turn count
      // before any other hook, and its afterModel (after* hooks run in reverse)
      // sees each AI message as the other middlewares left it.
      const maxTurns = Math.max(1, o.maxTurns);
      const probe: AgentMiddleware = {
        name: "SubagentProbe",
        beforeModel() {
          // Counted per AI message the child produced, so provider retries inside one turn do not use up turns.
          if (modelCalls >= maxTurns) {
            turnCapped = true;
            return { jumpTo: "end" };
          }
          return undefined;
        },
        afterModel(state) {
          const m = lastAi(state.messages);
          if (!m) return undefined;
          const key = m.id ?? `#${state.messages.length}`;
          if (seen.has(key)) return undefined;
          seen.add(key);
          modelCalls++;
          addUsage(usage, m);
          aiMessages.push(m);
          o.onAiMessage?.(m, aiMessages.length, { ...usage });
          return undefined;
        },
        async afterRun(state, runtime) {
          finalState = state;
          guardReason = guardStopReason(runtime.outcome.stopReason);
          // A child's sandbox tools lease the thread's sandbox on the child's own context; give it back
          // even when the child's chain has no Sandbox middleware (a no-op when that middleware already did).
          await releaseRunSandbox(runtime.context);
        },
      };
      const agent = await o.buildAgent([probe]);
      if (latch.value) return finish();
      const running = o.runChild(agent, { messages: o.messages }, {
        taskId: o.taskId,
        initialState: o.initialState,
        signal: child.signal,
        // Backstop only: the probe caps model turns exactly; each turn costs at most a model and a tool step.
        recursionLimit: maxTurns * 2 + 2,
      });
      const result = await this.settle(running, child.signal);
      if (!latch.value) this.classify(result, latch, { turnCapped, guardReason, maxTurns });
      return finish();
    } catch (err) {
      latch.set({ status: "failed", error: errorMessage(err) || "Sub-agent failed" });
      return finish();
    } finally {
      clearTimeout(timer);
      o.signal.removeEventListener("abort", onParentAbort);
      release?.();
    }
  }

  /** The child's result, or `undefined` when it did not stop within the grace period after an abort. */
  private async settle(running: Promise<RunResult>, signal: AbortSignal): Promise<RunResult | undefined> {
    let graceTimer: NodeJS.Timeout | undefined;
    const gave = new Promise<undefined>((resolve) => {
      const start = () => {
        graceTimer = setTimeout(() => resolve(undefined), this.graceMs);
      };
      if (signal.aborted) start();
      else signal.addEventListener("abort", start, { once: true });
    });
    try {
      return await Promise.race([running, gave]);
    } finally {
      clearTimeout(graceTimer);
    }
  }

  private classify(
    result: RunResult | undefined,
    latch: TerminalLatch,
    info: { turnCapped: boolean; guardReason?: SubagentStopReasonValue; maxTurns: number },
  ): void {
    if (!result) {
      latch.set({ status: "failed", error: "Sub-agent did not stop" });
      return;
    }
    const last = lastAi(result.state?.messages);
    const text = last ? contentText(last.content).trim() : "";
    const fallback = last?.additional_kwargs?.deerflow_error_fallback === true;
    const recursion = result.error instanceof GraphRecursionError || hasErrorCode(result.error, "recursion_limit");
    if (info.turnCapped || recursion) {
      const stopReason = info.guardReason ?? "turn_capped";
      if (fallback) latch.set({ status: "failed", error: text || "Model call failed", stopReason });
      else if (text) latch.set({ status: "completed", result: text, stopReason });
      else latch.set({ status: "failed", error: `Reached max_turns=${info.maxTurns}`, stopReason });
      return;
    }
    if (result.status === "cancelled") {
      latch.set({ status: "cancelled", error: SUBAGENT_CANCELLED_ERROR });
      return;
    }
    if (result.status === "interrupted") {
      latch.set({ status: "failed", error: "The sub-agent paused for human input, which a sub-agent cannot receive" });
      return;
    }
    if (result.status === "error") {
      latch.set({ status: "failed", error: errorMessage(result.error) || "Sub-agent failed", stopReason: info.guardReason });
      return;
    }
    if (fallback) {
      latch.set({ status: "failed", error: text || "Model call failed" });
      return;
    }
    // An empty final answer is a failure, never a "success" with nothing in it.
    if (!text) {
      latch.set({ status: "failed", error: "No response generated", stopReason: info.guardReason });
      return;
    }
    latch.set({ status: "completed", result: text, stopReason: info.guardReason });
  }
}
