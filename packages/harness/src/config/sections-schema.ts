/**
 * zod schemas of the feature sections of `config.yaml`, with DeerFlow's
 * defaults. Every section keeps unknown keys and takes its defaults when it is
 * absent or null.
 */
import { z } from "zod";
import { bool, int, list, mapOf, nullable, num, optionalSection, record, section } from "./schema-helpers";

/** `logging:` */
export const loggingSchema = section({
  enhance: section({ enabled: bool().default(false), format: z.enum(["text", "json"]).default("text") }),
});

/** `metrics:` the gateway's Prometheus endpoint `/metrics` (off by default). */
export const metricsSchema = section({ enabled: bool().default(false) });

/** `tracing:` OpenTelemetry traces over OTLP/HTTP, configured by the `OTEL_EXPORTER_OTLP_*` variables (off by default). */
export const tracingSchema = section({ enabled: bool().default(false) });

/** `token_usage:` */
export const tokenUsageSchema = section({ enabled: bool().default(true) });

/** `token_budget:` per-run token limits. */
export const tokenBudgetSchema = section({
  enabled: bool().default(false),
  max_tokens: int().default(200000),
  max_input_tokens: nullable(int()),
  max_output_tokens: nullable(int()),
  warn_threshold: num().default(0.8),
  hard_stop_threshold: num().default(1.0),
});

/** `tool_groups:` entry. */
export const toolGroupSchema = z.looseObject({ name: z.string().min(1) });

/** `tools:` entry. Extra keys (e.g. `max_results`) are read by the tool. */
export const toolConfigSchema = z.looseObject({
  name: z.string().min(1),
  group: nullable(z.string()),
  use: z.string().min(1),
});

/** `tool_search:` */
export const toolSearchSchema = section({ enabled: bool().default(false), auto_promote_top_k: int().default(3) });

/** `tool_output:` large tool results externalised to files. */
export const toolOutputSchema = section({
  enabled: bool().default(true),
  externalize_min_chars: int().default(12000),
  preview_head_chars: int().default(2000),
  preview_tail_chars: int().default(1000),
  fallback_max_chars: int().default(30000),
  fallback_head_chars: int().default(8000),
  fallback_tail_chars: int().default(3000),
  storage_subdir: z.string().default(".tool-results"),
  exempt_tools: list(z.string()).default(["read_file", "read_file_tool"]),
});

/** `suggestions:` */
export const suggestionsSchema = section({ enabled: bool().default(true), max_suggestions: int().default(3) });

/** `input_polish:` */
export const inputPolishSchema = section({
  enabled: bool().default(true),
  max_chars: int().default(4000),
  model_name: nullable(z.string()),
});

/** `loop_detection:` */
export const loopDetectionSchema = section({
  enabled: bool().default(true),
  warn_threshold: int().default(3),
  hard_limit: int().default(5),
  window_size: int().default(20),
  max_tracked_threads: int().default(100),
  tool_freq_warn: int().default(30),
  tool_freq_hard_limit: int().default(50),
});

/** `tool_progress:` */
export const toolProgressSchema = section({ enabled: bool().default(false) });

/** `read_before_write:` */
export const readBeforeWriteSchema = section({ enabled: bool().default(true) });

/** `safety_finish_reason:` */
export const safetyFinishReasonSchema = section({ enabled: bool().default(true), detectors: nullable(z.array(z.unknown())) });

/** `uploads:` */
export const uploadsSchema = section({
  max_files: int().default(10),
  max_file_size: int().default(52428800),
  max_total_size: int().default(104857600),
  auto_convert_documents: bool().default(false),
  pdf_converter: z.string().default("auto"),
});

/** `sandbox.mounts[]` entry. */
export const sandboxMountSchema = z.looseObject({
  host_path: z.string().min(1),
  container_path: z.string().min(1),
  read_only: bool().default(false),
});

/** `sandbox:` */
export const sandboxSchema = section({
  /** `auto` (section or key absent): bwrap when it works on this machine, else local. */
  use: z.string().default("auto"),
  allow_host_bash: bool().default(false),
  mounts: list(sandboxMountSchema),
  bash_output_max_chars: int().default(20000),
  read_file_output_max_chars: int().default(50000),
  ls_output_max_chars: int().default(20000),
  bash_command_timeout: num().default(600),
  image: nullable(z.string()),
  port: nullable(int()),
  replicas: nullable(int()),
  idle_timeout: nullable(num()),
  environment: mapOf(z.unknown()),
  overflow_policy: z.string().default("wait"),
  acquire_timeout: num().default(30),
  burst_limit: int().default(0),
});

/** `skills:` */
export const skillsSchema = section({
  use: z.string().default("deerflow.skills.storage:LocalSkillStorage"),
  path: nullable(z.string()),
  container_path: z.string().default("/mnt/skills"),
  deferred_discovery: bool().default(false),
});

/** `title:` */
export const titleSchema = section({
  enabled: bool().default(true),
  max_words: int().default(6),
  max_chars: int().default(60),
  model_name: nullable(z.string()),
  prompt_template: nullable(z.string()),
});

/** A summarization trigger/keep spec: `{type: tokens|messages|fraction, value}`. */
export const contextSizeSchema = z.looseObject({
  type: z.enum(["tokens", "messages", "fraction"]),
  value: num(),
});

/** `summarization:` (code defaults; DeerFlow's example enables it). */
export const summarizationSchema = section({
  enabled: bool().default(false),
  model_name: nullable(z.string()),
  trigger: nullable(z.union([contextSizeSchema, z.array(contextSizeSchema)])),
  keep: contextSizeSchema.nullish().transform((v) => v ?? { type: "messages" as const, value: 20 }),
  trim_tokens_to_summarize: nullable(int()).transform((v) => v ?? 4000),
  summary_prompt: nullable(z.string()),
  skill_file_read_tool_names: list(z.string()).default(["read_file", "read", "view", "cat"]),
});

/** `memory.backend_config`: read by the memory backend (`config/memory-config.ts` validates its keys). */
export const memoryBackendSectionSchema = section({});

/** `memory:` (backend-private settings live in `backend_config`). */
export const memorySchema = section({
  enabled: bool().default(true),
  injection_enabled: bool().default(true),
  shutdown_flush_timeout_seconds: num().default(30),
  manager_class: z.string().default("deermem"),
  mode: z.enum(["middleware", "tool"]).default("middleware"),
  // Backend keys (debounce_seconds, max_facts, model, embedding…) are validated by the memory subsystem (config/memory-config.ts).
  backend_config: memoryBackendSectionSchema,
});

/** `subagents:` */
export const subagentsSchema = section({
  timeout_seconds: num().default(1800),
  max_turns: nullable(int()),
  max_total_per_run: int().default(6),
  token_budget: nullable(record()),
  agents: mapOf(record()),
  custom_agents: mapOf(record()),
});

/** `subagent_runtime:` process-wide sub-agent admission (at least 4 run at once; queued FIFO beyond the limit). */
export const subagentRuntimeSchema = section({ max_running: int().default(8) });

/** `skill_scan:` */
export const skillScanSchema = section({ enabled: bool().default(true) });

/** `skill_evolution:` */
export const skillEvolutionSchema = section({
  enabled: bool().default(false),
  moderation_model_name: nullable(z.string()),
  security_fail_closed: bool().default(true),
});

/** `agents_api:` */
export const agentsApiSchema = section({ enabled: bool().default(false) });

/** A browser origin: `scheme://host[:port]` exactly as browsers send it in `Origin` (no path, no `*`). */
const originString = z.string().refine(
  (v) => {
    try {
      const u = new URL(v);
      return (u.protocol === "http:" || u.protocol === "https:") && u.origin === v.replace(/\/$/, "").toLowerCase();
    } catch {
      return false;
    }
  },
  { message: "expected an origin such as http://localhost:3000 (scheme, host, optional port; no path, no wildcard)" },
);

/**
 * `server:` which names and browser origins the gateway answers. The
 * defaults (loopback names and the bind address; the gateway's own origin)
 * need no entry here.
 */
export const serverSchema = section({
  /** Extra names accepted in the `Host` header, with or without `:port` (`deerflow.lan`, `10.0.0.5:2026`). */
  allowed_hosts: list(z.string().trim().min(1)),
  /** Extra origins allowed to send state-changing requests, answered with CORS headers (`http://localhost:3000`). */
  allowed_origins: list(originString),
});

/** `checkpointer:` (deprecated in DeerFlow in favour of `database:`). */
export const checkpointerSchema = optionalSection({
  type: z.enum(["memory", "sqlite", "postgres"]),
  connection_string: nullable(z.string()),
  postgres_schema: nullable(z.string()),
});

/** `database:` */
export const databaseSchema = section({
  backend: z.enum(["memory", "sqlite", "postgres"]).default("sqlite"),
  sqlite_dir: z.string().default(".deer-flow/data"),
  postgres_url: nullable(z.string()),
  postgres_schema: nullable(z.string()),
  checkpoint_channel_mode: z.enum(["full", "delta"]).default("full"),
  checkpoint_delta: section({ snapshot_frequency: int().default(10) }),
  checkpoint_graph_cache: section({ accessor_graph_max: int().default(64) }),
});

/** `run_events:` */
export const runEventsSchema = section({
  backend: z.enum(["memory", "db", "jsonl"]).default("memory"),
  max_trace_content: int().default(10240),
  track_token_usage: bool().default(true),
});

/** `stream_bridge:` */
export const streamBridgeSchema = section({
  // `sqlite` is ours (DeerFlow has memory|redis): a run's events in a file under the data dir, kept over a restart.
  type: z.enum(["memory", "redis", "sqlite"]).default("memory"),
  queue_maxsize: int().default(256),
  redis_url: nullable(z.string()),
  stream_ttl_seconds: int().default(86400),
});

/** `run_ownership:` */
export const runOwnershipSchema = section({
  lease_seconds: num().default(30),
  grace_seconds: num().default(10),
  heartbeat_enabled: bool().default(false),
});

/** `agent_storage:` */
export const agentStorageSchema = section({ backend: z.enum(["file", "db"]).default("file") });

/** `dedupe_storage:` */
export const dedupeStorageSchema = section({ backend: z.string().default("auto") });

/** `scheduler:` */
export const schedulerSchema = section({
  enabled: bool().default(false),
  multi_instance: bool().default(false),
  poll_interval_seconds: num().default(5),
  lease_seconds: num().default(120),
  max_concurrent_runs: int().default(3),
  min_once_delay_seconds: num().default(60),
});

/** `mcp_tasks:` */
export const mcpTasksSchema = section({ enabled: bool().default(false) });

/**
 * `mcp_api:` what MCP configs submitted through the HTTP API may do.
 * `allowed_env_vars`: the environment variables a `$VAR` / `${VAR}` in such a
 * config may reference (none by default; files the operator edits are not limited).
 */
export const mcpApiSchema = section({ allowed_env_vars: list(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")) });

/** `{use, config}` pluggable provider reference. */
export const providerRefSchema = z.looseObject({ use: z.string().min(1), config: nullable(record()) });

/** `guardrails:` */
export const guardrailsSchema = section({
  enabled: bool().default(false),
  fail_closed: bool().default(true),
  passport: nullable(z.string()),
  provider: nullable(providerRefSchema),
});

/** `authorization:` */
export const authorizationSchema = section({
  enabled: bool().default(false),
  fail_closed: bool().default(true),
  default_role: nullable(z.string()),
  provider: nullable(providerRefSchema),
});

/** `circuit_breaker:` */
export const circuitBreakerSchema = section({
  failure_threshold: int().default(5),
  recovery_timeout_sec: num().default(60),
});

/** `llm_call:` */
export const llmCallSchema = section({
  max_concurrent_calls: int().default(0),
  retry_max_attempts: int().default(3),
  retry_base_delay_ms: int().default(1000),
  retry_cap_delay_ms: int().default(8000),
  burst_retry_base_delay_ms: int().default(5000),
});

/** `plugins:` entry. */
export const pluginSchema = z.looseObject({
  name: nullable(z.string()),
  use: z.string().min(1),
  enabled: bool().default(true),
  required: bool().default(false),
  config: nullable(record()),
});

/** `auth.oidc.providers.{id}`: one OpenID Connect provider (DeerFlow's keys and defaults). */
export const oidcProviderSchema = z.looseObject({
  display_name: z.string().min(1),
  issuer: z.string().url(),
  client_id: z.string().min(1),
  client_secret: nullable(z.string()),
  redirect_uri: nullable(z.string().url()),
  scopes: z.array(z.string().min(1)).default(["openid", "email", "profile"]),
  token_endpoint_auth_method: z.enum(["client_secret_post", "client_secret_basic", "none"]).default("client_secret_post"),
  auto_create_users: bool().default(true),
  require_verified_email: bool().default(true),
  allowed_email_domains: list(z.string().trim().min(1)),
  admin_emails: list(z.string().trim().min(1)),
  pkce_enabled: bool().default(true),
  nonce_enabled: bool().default(true),
  authorization_endpoint: nullable(z.string().url()),
  token_endpoint: nullable(z.string().url()),
  userinfo_endpoint: nullable(z.string().url()),
  jwks_uri: nullable(z.string().url()),
});

/**
 * `auth:` users and sign-in. Off unless `enabled: true` (and the
 * `DEER_FLOW_AUTH_DISABLED=1` environment variable always wins). DeerFlow's
 * `local.allow_registration` is read as a synonym of `registration_enabled`.
 */
export const authSchema = section({
  enabled: bool().default(false),
  /** HS256 secret of the session cookie (`$DEER_FLOW_JWT_SECRET`; `deerflow init` generates one into `.env`). */
  jwt_secret: nullable(z.string().min(32, "expected at least 32 characters (deerflow init generates one)")),
  /** May visitors create `user` accounts through `POST /api/v1/auth/register`? Off by default: an admin adds users. */
  registration_enabled: nullable(bool()),
  /** Session lifetime in days (the `expires_in` of login is this × 86400). */
  session_days: int().default(7),
  local: section({ allow_registration: nullable(bool()) }),
  oidc: section({
    enabled: bool().default(false),
    frontend_base_url: nullable(z.string().url()),
    providers: mapOf(oidcProviderSchema),
  }),
});
