import { z } from "zod";
import { bool, int, nullable, num, record } from "./schema-helpers";

/** Per-model pricing (per one million tokens), shown by the console. */
export const modelPricingSchema = z.looseObject({
  currency: z.string().default("USD"),
  input_per_million: nullable(num()),
  output_per_million: nullable(num()),
  input_cache_hit_per_million: nullable(num()),
});

/**
 * One `models:` entry. Keys not listed here are kept and passed through to the
 * provider request (DeerFlow passes them as constructor kwargs).
 */
export const modelConfigSchema = z.looseObject({
  name: z.string().min(1),
  display_name: nullable(z.string()),
  description: nullable(z.string()),
  /** Provider: short name (`openai`) or DeerFlow class path (`langchain_openai:ChatOpenAI`). */
  use: z.string().min(1),
  /** The provider's model id. */
  model: z.string().min(1),
  api_key: nullable(z.string()),
  base_url: nullable(z.string()),
  max_tokens: nullable(int()),
  temperature: nullable(num()),
  supports_thinking: bool().default(false),
  supports_vision: bool().default(false),
  supports_reasoning_effort: bool().default(false),
  when_thinking_enabled: nullable(record()),
  when_thinking_disabled: nullable(record()),
  thinking: nullable(record()),
  context_window: nullable(int().refine((n) => n > 0, "context_window must be a positive integer")),
  stream_chunk_timeout: nullable(num()),
  use_responses_api: nullable(bool()),
  output_version: nullable(z.string()),
  pricing: nullable(modelPricingSchema),
});

/** A validated `models:` entry. */
export type ModelConfig = z.output<typeof modelConfigSchema>;

/** Keys of a model entry that describe the model to DeerFlow and are never sent to the provider. */
export const MODEL_META_KEYS: ReadonlySet<string> = new Set([
  "use",
  "name",
  "display_name",
  "description",
  "supports_thinking",
  "supports_reasoning_effort",
  "supports_vision",
  "when_thinking_enabled",
  "when_thinking_disabled",
  "thinking",
  "context_window",
  "pricing",
]);
