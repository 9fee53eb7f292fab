/**
 * Cost of token usage from `models[].pricing` (prices per one million
 * tokens): input tokens that hit the provider's prompt cache are billed at
 * `input_cache_hit_per_million` when it is set, else at the input price.
 */

/** `models[].pricing` of one model. */
export interface ModelPricing {
  currency?: string | null;
  input_per_million?: number | null;
  output_per_million?: number | null;
  input_cache_hit_per_million?: number | null;
}

/** The model entries pricing is looked up in (the config's `models:`). */
export interface PricedModel {
  name: string;
  pricing?: ModelPricing | null;
}

/** A cost and its currency. */
export interface Cost {
  cost: number;
  currency: string | null;
}

/** Tokens to price. */
export interface PricedTokens {
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the prompt cache. */
  cacheReadTokens?: number;
}

/** The cost of `tokens` on `model`, or null when the model has no (complete) pricing. */
export function costOf(models: readonly PricedModel[] | null | undefined, model: string | null | undefined, tokens: PricedTokens): Cost | null {
  const pricing = model ? models?.find((m) => m.name === model)?.pricing : undefined;
  if (!pricing || typeof pricing.input_per_million !== "number" || typeof pricing.output_per_million !== "number") return null;
  const input = Math.max(0, tokens.inputTokens);
  const cached = Math.min(Math.max(0, tokens.cacheReadTokens ?? 0), input);
  const hit = typeof pricing.input_cache_hit_per_million === "number" ? pricing.input_cache_hit_per_million : pricing.input_per_million;
  const cost = ((input - cached) * pricing.input_per_million + cached * hit + Math.max(0, tokens.outputTokens) * pricing.output_per_million) / 1_000_000;
  return { cost: Math.round(cost * 1e8) / 1e8, currency: pricing.currency ?? null };
}
