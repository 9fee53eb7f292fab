import { z } from "zod";
import { modelConfigSchema } from "./model-config-schema";
import { int, list, mapOf, nullable, record } from "./schema-helpers";
import * as s from "./sections-schema";

/** The config schema version this code understands (DeerFlow's example is at 34). */
export const CONFIG_VERSION = 34;

/**
 * The whole `config.yaml`. Unknown top-level keys are kept (extensions and
 * plugins read them); known keys are validated with DeerFlow's defaults.
 */
export const appConfigSchema = z.looseObject({
  /** Missing counts as 0 (very old file). */
  config_version: int().nullish().transform((v) => v ?? 0),
  log_level: z.enum(["debug", "info", "warning", "warn", "error", "critical"]).default("info"),
  logging: s.loggingSchema,
  metrics: s.metricsSchema,
  tracing: s.tracingSchema,
  /** Inline extensions (`middlewares` …); merged over `extensions_config.json`. */
  extensions: nullable(record()),
  token_usage: s.tokenUsageSchema,
  token_budget: s.tokenBudgetSchema,
  max_recursion_limit: int().default(1000),
  models: list(modelConfigSchema),
  tool_groups: list(s.toolGroupSchema),
  /** Absent (or null) = the default sandbox tool set; an explicit `[]` = no configured tools. */
  tools: z.preprocess((v) => (v === null ? undefined : v), z.array(s.toolConfigSchema).optional()),
  tool_search: s.toolSearchSchema,
  tool_output: s.toolOutputSchema,
  suggestions: s.suggestionsSchema,
  input_polish: s.inputPolishSchema,
  loop_detection: s.loopDetectionSchema,
  tool_progress: s.toolProgressSchema,
  read_before_write: s.readBeforeWriteSchema,
  safety_finish_reason: s.safetyFinishReasonSchema,
  uploads: s.uploadsSchema,
  sandbox: s.sandboxSchema,
  skills: s.skillsSchema,
  skill_scan: s.skillScanSchema,
  skill_evolution: s.skillEvolutionSchema,
  agents_api: s.agentsApiSchema,
  server: s.serverSchema,
  title: s.titleSchema,
  summarization: s.summarizationSchema,
  memory: s.memorySchema,
  subagents: s.subagentsSchema,
  subagent_runtime: s.subagentRuntimeSchema,
  acp_agents: mapOf(record()),
  checkpointer: s.checkpointerSchema,
  database: s.databaseSchema,
  run_events: s.runEventsSchema,
  stream_bridge: s.streamBridgeSchema,
  run_ownership: s.runOwnershipSchema,
  agent_storage: s.agentStorageSchema,
  dedupe_storage: s.dedupeStorageSchema,
  scheduler: s.schedulerSchema,
  mcp_tasks: s.mcpTasksSchema,
  mcp_api: s.mcpApiSchema,
  guardrails: s.guardrailsSchema,
  authorization: s.authorizationSchema,
  circuit_breaker: s.circuitBreakerSchema,
  llm_call: s.llmCallSchema,
  auth: s.authSchema,
  channels: nullable(record()),
  channel_connections: nullable(record()),
  plugins: list(s.pluginSchema),
});

/** The validated `config.yaml` as read from disk (before extensions are merged). */
export type AppConfigFile = z.output<typeof appConfigSchema>;

