import path from "node:path";
import { DEFAULT_UPLOAD_LIMITS } from "@deerflow/harness";
import type { Agent, CheckpointStore, ModelEntry, PersistenceStores, UploadLimits } from "@deerflow/harness";

/** What the gateway hands the agent factory for one run (or for state reads). */
export interface AgentRunConfig {
  /** `config.configurable` of the run, plus the whitelisted context keys and `thread_id`. */
  configurable: Record<string, unknown>;
  /** Whitelisted run context plus identity (`thread_id`, `run_id`, `user_id`). */
  context: Record<string, unknown>;
  /** `lead_agent` or a custom agent's assistant id. */
  assistantId: string;
}

/** Builds the agent for a run. The server never reaches into runtime internals. */
export type AgentFactory = (config: AgentRunConfig) => Agent | Promise<Agent>;

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /** Builds the agent for each run (and for state reads with an empty config). */
  agentFactory: AgentFactory;
  /** The checkpoint store the agents use (needed to delete a thread's checkpoints and to roll back a first run). */
  checkpointer?: CheckpointStore;
  /** Data dir for the SQLite database (default `.deer-flow`). */
  dataDir?: string;
  /**
   * Thread/run/transcript stores; default: SQLite `{dataDir}/gateway.db`
   * (harness `persistenceDbPath`, the file the embedded client opens too), or
   * `database` when given.
   */
  stores?: PersistenceStores;
  /** A SQLite path or open better-sqlite3 database for the gateway tables. */
  database?: string | import("better-sqlite3").Database;
  /** Root of per-thread files: `{baseDir}/users/{user}/threads/{thread}/user-data/...` (default `dataDir`). */
  baseDir?: string;
  /** Raw model entries from config (`name`, `model`, `display_name`, …); secrets are never listed. */
  models?: ModelEntry[];
  /** `token_usage.enabled` of `/api/models` (default false; `appConfig` wins when given). */
  tokenUsageEnabled?: boolean;
  /**
   * The app config's `models`, `token_usage` and `uploads` sections. When
   * given, `/api/models` and the upload limits come from it exactly as the
   * embedded client derives them, overriding `models`/`tokenUsageEnabled`/`uploads`.
   */
  appConfig?: GatewayAppConfig;
  /** `/api/suggestions/config`. */
  suggestions?: { enabled: boolean; max_suggestions: number };
  /** Upload limits (defaults 10 files, 50 MiB per file, 100 MiB total). */
  uploads?: Partial<UploadLimits>;
  /** Idle time before a `: heartbeat` comment (default 15000 ms). */
  heartbeatMs?: number;
  /** Retained events per run for replay (default 256). */
  replayBufferSize?: number;
  /** Drop a finished run's event buffer after this long (default 60000 ms). */
  reapAfterMs?: number;
  /** Max JSON body size (default 20 MiB). */
  maxBodyBytes?: number;
  /** Clamp for `config.recursion_limit` (default 1000); default when absent is 100. */
  maxRecursionLimit?: number;
  /** Mark a run `timeout` after this long (default: no timeout). */
  runTimeoutMs?: number;
  /** Built web UI to serve at `/` (default `packages/web/dist` when it exists). */
  webDistDir?: string | null;
  /** The user every request is treated as (auth disabled). Default `default`. */
  userId?: string;
  /** Log sink (default: console.error). Never receives secrets. */
  log?: (message: string) => void;
}

/** The parts of an app config the gateway reads. */
export interface GatewayAppConfig {
  models: ModelEntry[];
  token_usage?: { enabled?: boolean } | null;
  uploads?: Partial<UploadLimits> | null;
}

/** Options with defaults applied. */
export interface ResolvedGatewayOptions extends GatewayOptions {
  dataDir: string;
  models: ModelEntry[];
  tokenUsageEnabled: boolean;
  baseDir: string;
  uploads: UploadLimits;
  heartbeatMs: number;
  replayBufferSize: number;
  reapAfterMs: number;
  maxBodyBytes: number;
  maxRecursionLimit: number;
  userId: string;
  suggestions: { enabled: boolean; max_suggestions: number };
  log: (message: string) => void;
}

/** Apply defaults. */
export function resolveOptions(o: GatewayOptions): ResolvedGatewayOptions {
  const dataDir = path.resolve(o.dataDir ?? ".deer-flow");
  const cfg = o.appConfig;
  const uploads = cfg ? (cfg.uploads ?? {}) : (o.uploads ?? {});
  return {
    ...o,
    dataDir,
    models: cfg ? cfg.models : (o.models ?? []),
    tokenUsageEnabled: cfg ? cfg.token_usage?.enabled !== false : (o.tokenUsageEnabled ?? false),
    baseDir: path.resolve(o.baseDir ?? dataDir),
    uploads: {
      ...DEFAULT_UPLOAD_LIMITS,
      ...Object.fromEntries(Object.entries(uploads).filter(([k, v]) => k in DEFAULT_UPLOAD_LIMITS && typeof v === "number")),
    },
    heartbeatMs: o.heartbeatMs ?? 15_000,
    replayBufferSize: o.replayBufferSize ?? 256,
    reapAfterMs: o.reapAfterMs ?? 60_000,
    maxBodyBytes: o.maxBodyBytes ?? 20 * 1024 * 1024,
    maxRecursionLimit: o.maxRecursionLimit ?? 1000,
    userId: o.userId ?? "default",
    suggestions: o.suggestions ?? { enabled: false, max_suggestions: 3 },
    log: o.log ?? ((m) => console.error(m)),
  };
}
