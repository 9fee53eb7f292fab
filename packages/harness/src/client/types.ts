import type { CheckpointStore, Checkpointer } from "../checkpoints";
import type { AppConfig } from "../config";
import type { PersistenceStores } from "../persistence";
import type { Agent } from "../runtime";

/** Per-agent runtime options (DeerFlow's `configurable` keys). */
export interface ClientRuntimeConfig {
  model_name?: string;
  thinking_enabled: boolean;
  is_plan_mode: boolean;
  subagent_enabled: boolean;
  agent_name?: string;
}

/** What an {@link AgentFactory} is given to build the agent. */
export interface AgentBuildRequest {
  /** The loaded app config, or undefined when none was found and a factory was injected. */
  appConfig: AppConfig | undefined;
  runtimeConfig: ClientRuntimeConfig;
  checkpointer: CheckpointStore | Checkpointer;
  /** Absolute data directory (threads, SQLite, memory). */
  dataDir: string;
  userId: string;
}

/**
 * Builds the agent the client runs. Injected for tests/embedding; the default
 * builds the lead agent from config. Called again whenever the runtime
 * config changes (the result is cached per config key).
 */
export type AgentFactory = (request: AgentBuildRequest) => Agent | Promise<Agent>;

/** Options of `new DeerFlowClient(...)`. */
export interface DeerFlowClientOptions {
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
  agentName?: string;
  /** Data directory (default `.deer-flow` in the working directory). */
  dataDir?: string;
  /** Owner of threads and files (default `default`: auth is off in embedded use). */
  userId?: string;
  /** Builds the agent (default: the lead agent from config). */
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
  /** Extra `additional_kwargs` of the human message (e.g. `human_input_response`). */
  additionalKwargs?: Record<string, unknown>;
  /** Cancels the run. */
  signal?: AbortSignal;
  recursionLimit?: number;
  /** Extra run context (merged after the client's own keys). */
  context?: Record<string, unknown>;
}

/** Cumulative token usage of one turn. */
export interface ClientUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** One event of {@link DeerFlowClient.stream} (inventory §12). */
export type ClientStreamEvent =
  | { type: "values"; data: { title: string | null; messages: Record<string, unknown>[]; artifacts: string[]; [key: string]: unknown } }
  | { type: "messages-tuple"; data: Record<string, unknown> }
  | { type: "custom"; data: unknown }
  | { type: "end"; data: { usage: ClientUsage; thread_id: string; run_id: string; status: string } };
