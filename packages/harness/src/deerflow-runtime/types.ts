import type { CheckpointStore, Checkpointer } from "../checkpoints";
import type { AppConfig, ConfigManager } from "../config";
import type { CreateChatModelOptions, CreatedChatModel } from "../models";
import type { PersistenceStores } from "../persistence";
import type { Agent, AgentMiddleware } from "../runtime";
import type { SandboxProvider } from "../sandbox";
import type { ToolDefinition } from "../tools";
import type { LeadRuntimeOptions } from "../agents";

/** A run's parsed settings (DeerFlow's runtime keys, read once at the edge). */
export type RunSettings = LeadRuntimeOptions;

/** What an {@link AgentFactory} is given to build the agent of one run. */
export interface AgentBuildRequest {
  /** The run's settings, parsed once by the caller (gateway, client, CLI). */
  settings: RunSettings;
  /** The current app config, or undefined when none was found and a factory was injected. */
  appConfig: AppConfig | undefined;
  /** The runtime's one checkpointer: every agent of the process must use it (its cache is shared). */
  checkpointer: Checkpointer;
  /** Absolute data directory (threads, SQLite, memory). */
  dataDir: string;
  /** The run's user (same as `settings.userId`). */
  userId: string;
  sandboxProvider: SandboxProvider;
}

/**
 * Builds the agent a run executes. The default builds DeerFlow's lead agent
 * from config; tests and embedders inject their own (e.g. over a
 * ScriptedModel). Async: extension tools load while building.
 */
export type AgentFactory = (request: AgentBuildRequest) => Agent | Promise<Agent>;

/** Options of {@link DeerFlowRuntime.open}. */
export interface DeerFlowRuntimeOptions {
  /** config.yaml path (else the usual lookup from `cwd`). */
  configPath?: string;
  /** Working directory for config lookup and the default data dir. */
  cwd?: string;
  /** A fixed config or a hot-reloading manager (skips file lookup). */
  config?: AppConfig | ConfigManager;
  /**
   * Start without a config.yaml when none is found (only meaningful with an
   * injected {@link agentFactory}; the lead agent needs a model).
   */
  allowMissingConfig?: boolean;
  /** Data directory (default `.deer-flow` under `cwd`). */
  dataDir?: string;
  /** Checkpoint store (default: `database:` of the config — SQLite `{dataDir}/data/deerflow.db`, or memory). */
  checkpointer?: CheckpointStore | Checkpointer;
  /** Thread/run/transcript stores (default: SQLite `{dataDir}/gateway.db`, memory with `database.backend: memory`). */
  stores?: PersistenceStores;
  /** Sandbox provider (default: from `config.sandbox`: bubblewrap when it isolates here, else local). */
  sandboxProvider?: SandboxProvider;
  /** Replace the lead agent (tests, embedding). */
  agentFactory?: AgentFactory;
  /** Build chat models (tests inject scripted models here, keeping the real lead agent). */
  modelFactory?: (config: AppConfig, name: string | null | undefined, options: CreateChatModelOptions) => CreatedChatModel;
  /** Programmatic middlewares for every lead agent (DeerFlow's `custom_middlewares`). */
  customMiddleware?: AgentMiddleware[];
  /** Extra tools for every lead agent. */
  extraTools?: ToolDefinition[];
  /** Log sink for warnings (default: console.warn). Never receives secrets. */
  log?: (message: string) => void;
}

/** A hook the runtime calls when a thread is deleted (MCP sessions, memory, caches). */
export type ThreadDeletedHook = (threadId: string, userId: string) => void | Promise<void>;

/** A resource the runtime closes on {@link DeerFlowRuntime.close} (in reverse order of registration). */
export type CloseHook = () => void | Promise<void>;
