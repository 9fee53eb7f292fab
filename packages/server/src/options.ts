import path from "node:path";
import type { CheckpointStore } from "../../harness/src/checkpoints";
import type { Agent } from "../../harness/src/runtime/types";
import type { GatewayStores } from "./store/types";

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

/** One configured model as the gateway lists it (no secrets). */
export interface ModelInfo {
  name: string;
  model: string;
  display_name: string | null;
  description: string | null;
  supports_thinking: boolean;
  supports_reasoning_effort: boolean;
}

/** Upload limits (bytes / counts). */
export interface UploadLimits {
  max_files: number;
  max_file_size: number;
  max_total_size: number;
}

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /** Builds the agent for each run (and for state reads with an empty config). */
  agentFactory: AgentFactory;
  /** The checkpoint store the agents use (needed to delete a thread's checkpoints and to roll back a first run). */
  checkpointer?: CheckpointStore;
  /** Data dir for the SQLite database (default `.deer-flow`). */
  dataDir?: string;
  /** Gateway stores; default: SQLite `{dataDir}/gateway.db`, or `database` when given. */
  stores?: GatewayStores;
  /** A SQLite path or open better-sqlite3 database for the gateway tables. */
  database?: string | import("better-sqlite3").Database;
  /** Root of per-thread files: `{baseDir}/users/{user}/threads/{thread}/user-data/...` (default `dataDir`). */
  baseDir?: string;
  /** Raw model entries from config (`name`, `model`, `display_name`, …); secrets are never listed. */
  models?: Array<Record<string, unknown>>;
  /** `token_usage.enabled` of `/api/models`. */
  tokenUsageEnabled?: boolean;
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

/** Options with defaults applied. */
export interface ResolvedGatewayOptions extends GatewayOptions {
  dataDir: string;
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
  return {
    ...o,
    dataDir,
    baseDir: path.resolve(o.baseDir ?? dataDir),
    uploads: { max_files: 10, max_file_size: 50 * 1024 * 1024, max_total_size: 100 * 1024 * 1024, ...(o.uploads ?? {}) },
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
