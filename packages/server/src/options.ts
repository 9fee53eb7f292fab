import path from "node:path";
import { DEFAULT_UPLOAD_LIMITS, readEnv } from "@deerflow-ts/harness";
import type { AgentFactory, CheckpointStore, DeerFlowRuntime, ModelEntry, PersistenceStores, UploadLimits } from "@deerflow-ts/harness";
import { DEFAULT_SSE_MAX_BACKLOG_BYTES } from "./sse/sse-response";

export type { AgentFactory };

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /**
   * The runtime the gateway serves (config, checkpointer, stores, sandbox,
   * agents, run recorder). It stays open when the gateway closes: its owner
   * closes it. Without one, the gateway opens its own from `agentFactory`,
   * `checkpointer`, `stores`/`database` and `dataDir`, and closes it.
   */
  runtime?: DeerFlowRuntime;
  /** Builds the agent of each run when no `runtime` is given (tests, embedding). */
  agentFactory?: AgentFactory;
  /** The checkpoint store of the gateway's own runtime (ignored with `runtime`). */
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
  /** Root of per-thread files: `{baseDir}/users/{user}/threads/{thread}/user-data/...` (default: the runtime's data dir). */
  baseDir?: string;
  /** Raw model entries from config (`name`, `model`, `display_name`, …); secrets are never listed. */
  models?: ModelEntry[];
  /** `token_usage.enabled` of `/api/models` (default false; `appConfig` wins when given). */
  tokenUsageEnabled?: boolean;
  /**
   * The app config's `models`, `token_usage` and `uploads` sections. When
   * given, `/api/models` and the upload limits come from it exactly as the
   * embedded client derives them, overriding `models`/`tokenUsageEnabled`/`uploads`.
   * With a `runtime` that has a config, the runtime's current config is used
   * instead (so an edit of config.yaml shows on the next request).
   */
  appConfig?: GatewayAppConfig;
  /** IM channel tuning (tests: the backoff sleep, the streaming edit interval, the clock). */
  channels?: import("./channels").ChannelHostOptions;
  /** `agents_api.enabled`: serve the custom-agent routes (default false → 403; `appConfig` wins when given). */
  agentsApiEnabled?: boolean;
  /** `/api/suggestions/config`. */
  suggestions?: { enabled: boolean; max_suggestions: number };
  /** Upload limits (defaults 10 files, 50 MiB per file, 100 MiB total). */
  uploads?: Partial<UploadLimits>;
  /** Idle time before a `: heartbeat` comment (default 15000 ms). */
  heartbeatMs?: number;
  /**
   * Bytes an SSE client may leave unread before it is disconnected (default 16 MiB;
   * `DEER_FLOW_SSE_MAX_BACKLOG_BYTES` in the environment overrides the default).
   */
  sseMaxBacklogBytes?: number;
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
  /**
   * Demo mode (`npm start` without a config.yaml): the only model is the
   * scripted demo test double. Reported by `/api/features` as `demo_mode` so
   * the web UI shows a banner with the command that configures a real model.
   */
  demoMode?: { configureCommand: string } | null;
  /** The id of the synthetic admin every request is in auth-disabled mode. Default `default`. */
  userId?: string;
  /**
   * Sign-in settings instead of the config's `auth:` section (tests,
   * embedding): an `auth:` section (resolved with `resolveAuthSettings`) or
   * resolved settings, or a function returning either as of now. Default:
   * the runtime's current config, else `appConfig.auth`.
   */
  auth?: import("./auth").AuthSection | import("./auth").AuthSettings | (() => import("./auth").AuthSection | import("./auth").AuthSettings);
  /** An open account store instead of `{dataDir}/auth.db` (left open when the gateway closes). */
  userStore?: import("./auth").AccountStore;
  /** Clock of sessions and login lockouts in ms (tests). Default `Date.now`. */
  authClock?: () => number;
  /** Reverse proxies whose `X-Real-IP`/`X-Forwarded-Proto` are believed (comma-separated IPs/CIDRs). Default `$AUTH_TRUSTED_PROXIES`. */
  trustedProxies?: string;
  /** The skill registry behind `/api/skills` (default: the runtime's, else one built from its config). */
  skills?: import("@deerflow-ts/harness").SkillRegistry;
  /**
   * Extra names served in the `Host` header, added to `server.allowed_hosts`
   * of the config (defaults always served: localhost, 127.0.0.1, [::1] and
   * the bind address). `name` matches any port, `name:port` only that port.
   */
  allowedHosts?: string[];
  /**
   * Extra browser origins (`http://localhost:3000`) that may send
   * state-changing requests and get CORS headers, added to
   * `server.allowed_origins`. The gateway's own origin needs no entry.
   */
  allowedOrigins?: string[];
  /** Log sink (default: console.error, or `logger` when given). Never receives secrets. */
  log?: (message: string) => void;
  /**
   * The structured logger (`openLogger` of `observability/`): with one, every
   * request gets an access line and an `X-Request-Id`, and every run a start
   * and an end line. Without one (the default) neither is written.
   */
  logger?: import("./observability/logger").Logger;
  /** `/metrics` (Prometheus text); default: `metrics.enabled` of the runtime's config. */
  metrics?: boolean;
}

/** The parts of an app config the gateway reads. */
export interface GatewayAppConfig {
  models: ModelEntry[];
  token_usage?: { enabled?: boolean } | null;
  uploads?: Partial<UploadLimits> | null;
  agents_api?: { enabled?: boolean } | null;
  server?: { allowed_hosts?: string[]; allowed_origins?: string[] } | null;
  auth?: import("./auth").AuthSection | null;
  /** DeerFlow's `channels:` and `channel_connections:` (validated by the channel manager). */
  channels?: Record<string, unknown> | null;
  channel_connections?: Record<string, unknown> | null;
}

/** Options with defaults applied. */
export interface ResolvedGatewayOptions extends GatewayOptions {
  dataDir: string;
  models: ModelEntry[];
  tokenUsageEnabled: boolean;
  agentsApiEnabled: boolean;
  baseDir: string;
  uploads: UploadLimits;
  heartbeatMs: number;
  sseMaxBacklogBytes: number;
  replayBufferSize: number;
  reapAfterMs: number;
  maxBodyBytes: number;
  maxRecursionLimit: number;
  userId: string;
  suggestions: { enabled: boolean; max_suggestions: number };
  log: (message: string) => void;
}

/** The environment variable that overrides the SSE backlog default (operators; tests of slow clients). */
export const SSE_MAX_BACKLOG_ENV = "DEER_FLOW_SSE_MAX_BACKLOG_BYTES";

function backlogFromEnv(): number | undefined {
  const raw = readEnv(SSE_MAX_BACKLOG_ENV);
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1024) throw new Error(`${SSE_MAX_BACKLOG_ENV} must be a whole number of bytes of at least 1024, got '${raw}'.`);
  return n;
}

/** Apply defaults. */
export function resolveOptions(o: GatewayOptions): ResolvedGatewayOptions {
  const dataDir = path.resolve(o.runtime?.dataDir ?? o.dataDir ?? ".deer-flow");
  const cfg = o.appConfig;
  const uploads = cfg ? (cfg.uploads ?? {}) : (o.uploads ?? {});
  return {
    ...o,
    dataDir,
    models: cfg ? cfg.models : (o.models ?? []),
    tokenUsageEnabled: cfg ? cfg.token_usage?.enabled !== false : (o.tokenUsageEnabled ?? false),
    agentsApiEnabled: cfg?.agents_api ? cfg.agents_api.enabled === true : (o.agentsApiEnabled ?? false),
    baseDir: path.resolve(o.baseDir ?? dataDir),
    uploads: {
      ...DEFAULT_UPLOAD_LIMITS,
      ...Object.fromEntries(Object.entries(uploads).filter(([k, v]) => k in DEFAULT_UPLOAD_LIMITS && typeof v === "number")),
    },
    heartbeatMs: o.heartbeatMs ?? 15_000,
    sseMaxBacklogBytes: o.sseMaxBacklogBytes ?? backlogFromEnv() ?? DEFAULT_SSE_MAX_BACKLOG_BYTES,
    replayBufferSize: o.replayBufferSize ?? 256,
    reapAfterMs: o.reapAfterMs ?? 60_000,
    maxBodyBytes: o.maxBodyBytes ?? 20 * 1024 * 1024,
    maxRecursionLimit: o.maxRecursionLimit ?? 1000,
    userId: o.userId ?? "default",
    suggestions: o.suggestions ?? { enabled: false, max_suggestions: 3 },
    log: o.log ?? ((m) => console.error(m)),
  };
}
