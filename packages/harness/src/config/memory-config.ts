/**
 * Memory settings: the host-level `memory:` keys plus the backend's own
 * `memory.backend_config` (DeerFlow's current layout). Older configs put the
 * backend keys directly under `memory:` (`memory.debounce_seconds`,
 * `memory.model_name`…); those are still read, and `backend_config` wins when
 * both are set.
 */
import { z } from "zod";
import { ConfigError } from "../errors";

const numeric = (v: unknown) => (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v)) ? Number(v) : v);
const bounded = (base: z.ZodNumber, min?: number, max?: number) => {
  let n = base;
  if (min !== undefined) n = n.min(min);
  if (max !== undefined) n = n.max(max);
  return n;
};
/** A number (numeric strings accepted, as `$VAR` values are strings). */
const num = (min?: number, max?: number) => z.preprocess(numeric, bounded(z.number(), min, max));
/** An integer, likewise. */
const int = (min?: number, max?: number) => z.preprocess(numeric, bounded(z.number().int(), min, max));
const bool = () =>
  z.preprocess((v) => {
    if (typeof v === "string") {
      const s = v.trim().toLowerCase();
      if (["true", "yes", "on", "1"].includes(s)) return true;
      if (["false", "no", "off", "0"].includes(s)) return false;
    }
    return v;
  }, z.boolean());

/** A model reference: a model name from `models:`, or DeerFlow's `{provider, model, api_key, base_url, temperature}`. */
const modelRefSchema = z.union([
  z.string().min(1),
  z.looseObject({
    provider: z.string().nullish(),
    model: z.string().nullish(),
    name: z.string().nullish(),
    api_key: z.string().nullish(),
    base_url: z.string().nullish(),
    temperature: num().nullish(),
    dimensions: int().nullish(),
  }),
]);

/** A model reference as configured. */
export type MemoryModelRef = z.output<typeof modelRefSchema>;

/** `memory.backend_config` (all keys optional; DeerFlow's defaults). */
export const memoryBackendConfigSchema = z.looseObject({
  storage_path: z.string().default(""),
  debounce_seconds: num(0, 300).default(30),
  queue_max_depth: int(0).default(1000),
  // No upper cap: the relevance index keeps injection fast with 10,000 facts.
  max_facts: int(1).default(100),
  fact_eviction_policy: z.enum(["confidence", "hybrid-v1"]).default("confidence"),
  eviction_confidence_weight: num(0, 1).default(0.65),
  eviction_confirmation_weight: num(0, 1).default(0.25),
  eviction_access_weight: num(0, 1).default(0.1),
  eviction_confirmation_half_life_days: int(1).default(90),
  eviction_access_half_life_days: int(1).default(30),
  eviction_correction_reserved_fraction: num(0, 1).default(0.1),
  eviction_correction_reserved_max: int(0).default(10),
  fact_confidence_threshold: num(0, 1).default(0.7),
  max_injection_tokens: int(50, 32000).default(2000),
  token_counting: z.enum(["tiktoken", "char"]).default("char"),
  guaranteed_categories: z.array(z.string()).default(["correction"]),
  guaranteed_token_budget: int(0, 8000).default(500),
  staleness_review_enabled: bool().default(true),
  staleness_age_days: int(1).default(90),
  staleness_min_candidates: int(1).default(3),
  staleness_max_removals_per_cycle: int(1).default(10),
  staleness_protected_categories: z.array(z.string()).default(["correction"]),
  staleness_max_lifetime_multiplier: num(1).default(20),
  staleness_max_extension_days: int(1).default(3650),
  consolidation_enabled: bool().default(false),
  consolidation_min_facts: int(2).default(8),
  consolidation_max_groups_per_cycle: int(1).default(3),
  consolidation_max_sources: int(2).default(8),
  watermark_max_keys: int(0).default(4096),
  /** `fts5` (relevance ranking, default) or `""` (DeerFlow's confidence-only order). */
  retrieval_adapter: z.string().default("fts5"),
  /** The updater model; null = the default chat model. */
  model: modelRefSchema.nullish().transform((v) => v ?? null),
  /** An embedding model for hybrid ranking; null = lexical BM25 only. */
  embedding: modelRefSchema.nullish().transform((v) => v ?? null),
  /** Tier 2: keep a short summary per thread and recall it in new threads. */
  thread_summaries_enabled: bool().default(true),
  /** Tier 3: keep entity–relation–entity triples and recall one hop from named entities. */
  knowledge_graph_enabled: bool().default(true),
});

/** Parsed backend settings. */
export type MemoryBackendConfig = z.output<typeof memoryBackendConfigSchema>;

/** Host-level `memory:` keys. */
export const memoryHostConfigSchema = z.looseObject({
  enabled: bool().default(true),
  injection_enabled: bool().default(true),
  mode: z.enum(["middleware", "tool"]).default("middleware"),
  manager_class: z.string().default("deermem"),
  shutdown_flush_timeout_seconds: num(0).default(30),
});

/** The resolved memory settings. */
export interface ResolvedMemoryConfig {
  enabled: boolean;
  injection_enabled: boolean;
  mode: "middleware" | "tool";
  manager_class: string;
  shutdown_flush_timeout_seconds: number;
  backend: MemoryBackendConfig;
  /** `backend_config` as configured, for `GET /api/memory/config`. */
  rawBackendConfig: Record<string, unknown>;
}

const HOST_KEYS = new Set(["enabled", "injection_enabled", "mode", "manager_class", "shutdown_flush_timeout_seconds", "backend_config"]);
/** Flat keys of older configs that were renamed when they moved under `backend_config`. */
const LEGACY_RENAMES: Record<string, string> = { model_name: "model" };

/**
 * Resolve the `memory:` section (as parsed by the app config, or raw YAML).
 * @throws ConfigError naming the bad key.
 */
export function resolveMemoryConfig(section: unknown): ResolvedMemoryConfig {
  const raw = section && typeof section === "object" ? (section as Record<string, unknown>) : {};
  const host = memoryHostConfigSchema.safeParse(raw);
  if (!host.success) throw configError(host.error, "memory");
  const flat: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (HOST_KEYS.has(k) || v === null || v === undefined) continue;
    flat[LEGACY_RENAMES[k] ?? k] = v;
  }
  const nested = raw.backend_config && typeof raw.backend_config === "object" ? (raw.backend_config as Record<string, unknown>) : {};
  const cleanNested = Object.fromEntries(Object.entries(nested).filter(([, v]) => v !== null && v !== undefined));
  const merged = { ...flat, ...cleanNested };
  const backend = memoryBackendConfigSchema.safeParse(merged);
  if (!backend.success) throw configError(backend.error, "memory.backend_config");
  const w = backend.data.eviction_confidence_weight + backend.data.eviction_confirmation_weight + backend.data.eviction_access_weight;
  if (Math.abs(w - 1) > 1e-9) throw new ConfigError("memory.backend_config: eviction weights must sum to 1.0", { code: "config_invalid", details: { key: "memory.backend_config" } });
  return { ...host.data, backend: backend.data, rawBackendConfig: merged };
}

function configError(error: z.ZodError, prefix: string): ConfigError {
  const issue = error.issues[0];
  const key = [prefix, ...issue.path.map(String)].join(".");
  return new ConfigError(`Invalid ${key}: ${issue.message}`, { code: "config_invalid", details: { key } });
}

/** The model name a reference points at (`"fast"`, `{model: "fast"}`), or null for the default model. */
export function modelRefName(ref: MemoryModelRef | null): string | null {
  if (ref === null) return null;
  if (typeof ref === "string") return ref;
  return ref.name ?? ref.model ?? null;
}
