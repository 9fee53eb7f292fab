import type { PersistenceStores, RunHook, RunRecord } from "@deerflow-ts/harness";
import type { Logger } from "./logger";
import type { PricedModel } from "./pricing";
import { costOf } from "./pricing";

/** What {@link createRunLogHook} needs. */
export interface RunLogOptions {
  logger: Logger;
  stores: PersistenceStores;
  /** The configured models as of now (for `cost` when they carry `pricing`). */
  models?: () => readonly PricedModel[] | null | undefined;
}

/** `msg` of a finished run's line by its status; `interrupted` is a cancel (user, multitask strategy, shutdown). */
const END_MESSAGE: Record<string, string> = { success: "run finished", error: "run failed", timeout: "run timed out", interrupted: "run cancelled" };

function usageFields(r: RunRecord): Record<string, unknown> {
  const u = r.usage;
  return {
    input_tokens: u.totalInputTokens,
    output_tokens: u.totalOutputTokens,
    total_tokens: u.totalTokens,
    llm_calls: u.llmCallCount,
    by_caller: { lead_agent: u.leadAgentTokens, subagent: u.subagentTokens, middleware: u.middlewareTokens },
  };
}

/**
 * A run hook writing one line when a run starts (`run started`) and one when it
 * ends (`run finished` / `run failed` / `run timed out` / `run cancelled`),
 * each with run id, thread id, user, assistant and model; the end line also
 * with the record's tokens, its duration and, when the model is priced, its
 * cost. The figures are the stored record's, read once the record is written.
 */
export function createRunLogHook(options: RunLogOptions): RunHook {
  if (!options?.logger || !options.stores) throw new TypeError("createRunLogHook needs {logger, stores}");
  const { logger, stores } = options;
  const base = (r: RunRecord) => ({ component: "run", run_id: r.runId, thread_id: r.threadId, user_id: r.userId, assistant_id: r.assistantId, model: r.modelName });
  return {
    name: "run-log",
    async runStarted(run) {
      if (!logger.isLevelEnabled("info")) return;
      const r = await stores.runs.get(run.runId);
      logger.info(r ? base(r) : { component: "run", run_id: run.runId, thread_id: run.threadId, user_id: run.userId }, "run started");
    },
    async runFinished(run) {
      const r = await stores.runs.get(run.runId);
      if (!r) return;
      const line: Record<string, unknown> = {
        ...base(r),
        status: r.status,
        ...usageFields(r),
        duration_ms: Math.max(0, Date.parse(r.updatedAt) - Date.parse(r.createdAt)),
      };
      if (r.stopReason) line.stop_reason = r.stopReason;
      const cost = costOf(options.models?.(), r.modelName, { inputTokens: r.usage.totalInputTokens, outputTokens: r.usage.totalOutputTokens });
      if (cost) Object.assign(line, cost);
      const msg = END_MESSAGE[r.status] ?? `run ${r.status}`;
      if (r.status === "error" || r.status === "timeout") logger.error({ ...line, error: r.error }, msg);
      else logger.info(line, msg);
    },
  };
}
