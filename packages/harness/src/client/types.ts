import type { CheckpointStore, Checkpointer } from "../checkpoints";
import type { AppConfig } from "../config";
import type { AgentFactory, DeerFlowRuntime } from "../deerflow-runtime";
import type { ReasoningEffort } from "../models";
import type { PersistenceStores } from "../persistence";

/** Options of `new DeerFlowClient(...)`. */
export interface DeerFlowClientOptions {
  /**
   * The runtime to run on (shared with a gateway or CLI in the same process).
   * Without one the client opens its own from the options below and closes it
   * in {@link DeerFlowClient.close}.
   */
  runtime?: DeerFlowRuntime;
  /** config.yaml path (else the normal lookup order). */
  configPath?: string;
  /** An already-loaded config (skips file lookup). */
  appConfig?: AppConfig;
  /** Where threads are persisted (default: `database:` of the config; SQLite in `{dataDir}/data/deerflow.db`). */
  checkpointer?: CheckpointStore | Checkpointer;
  /**
   * Thread metadata / run / transcript stores (default: the gateway's SQLite
   * file `{dataDir}/gateway.db`, so both list the same threads; in-memory with
   * `database.backend: memory`). Stores passed in are not closed by the client.
   */
  stores?: PersistenceStores;
  modelName?: string;
  /** Default true. */
  thinkingEnabled?: boolean;
  /** Default false. */
  subagentEnabled?: boolean;
  /** Default false. */
  planMode?: boolean;
  /** Default: the model's own (DeerFlow passes none). */
  reasoningEffort?: ReasoningEffort;
  agentName?: string;
  /** Data directory (default `.deer-flow` in the working directory). */
  dataDir?: string;
  /** Owner of threads and files (default `default`: auth is off in embedded use). */
  userId?: string;
  /** Builds the agent (default: the lead agent from config). Ignored when `runtime` is given. */
  agentFactory?: AgentFactory;
  /** Working directory for config lookup and the default data dir. */
  cwd?: string;
}

/** Per-call overrides of {@link DeerFlowClientOptions}. */
export interface ClientRunOptions {
  /** Thread to continue (a new id is generated when absent). */
  threadId?: string;
  modelName?: string;
  thinkingEnabled?: boolean;
  subagentEnabled?: boolean;
  planMode?: boolean;
  reasoningEffort?: ReasoningEffort;
  /**
   * Host paths uploaded into the thread before the run and attached to the
   * human message (`additional_kwargs.files`), as the web UI does: the model
   * is told about them in a `<current_uploads>` block.
   */
  files?: readonly string[];
  /** Extra `additional_kwargs` of the human message (e.g. `human_input_response`). */
  additionalKwargs?: Record<string, unknown>;
  /** Cancels the run. */
  signal?: AbortSignal;
  recursionLimit?: number;
  /** Extra DeerFlow run keys (`max_concurrent_subagents`, `non_interactive`, …), parsed with the client's own. */
  context?: Record<string, unknown>;
}

/** Tokens of one turn by caller, as the gateway's `token-usage` route splits them. */
export interface ClientUsageByCaller {
  lead_agent: number;
  subagent: number;
  middleware: number;
}

/**
 * Cumulative token usage of one turn. In the `end` event it is the run
 * record's figures (lead agent + sub-agents + middleware model calls), the same
 * totals the gateway reports for the run; `by_caller` is the split. Streamed
 * messages carry only the lead agent's usage, so a sum of them is lower.
 */
export interface ClientUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Present when the run record was read (the `end` event of both clients). */
  by_caller?: ClientUsageByCaller;
}

/** One event of {@link DeerFlowClient.stream} (DeerFlow's embedded client event types). */
export type ClientStreamEvent =
  | { type: "values"; data: { title: string | null; messages: Record<string, unknown>[]; artifacts: string[]; [key: string]: unknown } }
  | { type: "messages-tuple"; data: Record<string, unknown> }
  | { type: "custom"; data: unknown }
  | { type: "end"; data: { usage: ClientUsage; thread_id: string; run_id: string; status: string } };
