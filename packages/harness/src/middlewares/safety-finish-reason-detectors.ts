import type { AIMessage } from "../messages";

/** A detected provider-side safety termination. */
export interface SafetyTermination {
  detector: string;
  /** Metadata field carrying the signal (`finish_reason`, `stop_reason`). */
  reason_field: string;
  reason_value: string;
  extras: Record<string, unknown>;
}

/** Strategy interface: recognise one provider's "stopped for safety" signal. Must not throw. */
export interface SafetyTerminationDetector {
  readonly name: string;
  detect(message: AIMessage): SafetyTermination | null;
}

/** A string value of `response_metadata[field]`, else `additional_kwargs[field]`. */
export function metadataValue(message: AIMessage, field: string): string | null {
  for (const container of [message.response_metadata, message.additional_kwargs]) {
    const v = container?.[field];
    if (typeof v === "string" && v) return v;
  }
  return null;
}

/** OpenAI-compatible `finish_reason` in `finish_reasons` (default `content_filter`, case-insensitive). */
export function openAICompatibleContentFilterDetector(config: { finish_reasons?: string[] } = {}): SafetyTerminationDetector {
  const reasons = new Set((config.finish_reasons ?? ["content_filter"]).map((r) => r.toLowerCase()));
  return {
    name: "openai_compatible_content_filter",
    detect(message) {
      const v = metadataValue(message, "finish_reason");
      if (!v || !reasons.has(v.toLowerCase())) return null;
      const extras: Record<string, unknown> = {};
      const cfr = message.response_metadata?.content_filter_results;
      if (cfr) extras.content_filter_results = cfr;
      return { detector: this.name, reason_field: "finish_reason", reason_value: v, extras };
    },
  };
}

/** Anthropic `stop_reason` in `stop_reasons` (default `refusal`). */
export function anthropicRefusalDetector(config: { stop_reasons?: string[] } = {}): SafetyTerminationDetector {
  const reasons = new Set((config.stop_reasons ?? ["refusal"]).map((r) => r.toLowerCase()));
  return {
    name: "anthropic_refusal",
    detect(message) {
      const v = metadataValue(message, "stop_reason");
      if (!v || !reasons.has(v.toLowerCase())) return null;
      return { detector: this.name, reason_field: "stop_reason", reason_value: v, extras: {} };
    },
  };
}

/** Gemini safety finish reasons (upper-case taxonomy). */
export const GEMINI_SAFETY_FINISH_REASONS = [
  "SAFETY",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "RECITATION",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
] as const;

/** Gemini / Vertex `finish_reason` in `finish_reasons` (default {@link GEMINI_SAFETY_FINISH_REASONS}). */
export function geminiSafetyDetector(config: { finish_reasons?: string[] } = {}): SafetyTerminationDetector {
  const reasons = new Set((config.finish_reasons ?? [...GEMINI_SAFETY_FINISH_REASONS]).map((r) => r.toUpperCase()));
  return {
    name: "gemini_safety",
    detect(message) {
      const v = metadataValue(message, "finish_reason");
      if (!v || !reasons.has(v.toUpperCase())) return null;
      const extras: Record<string, unknown> = {};
      const ratings = message.response_metadata?.safety_ratings;
      if (ratings) extras.safety_ratings = ratings;
      return { detector: this.name, reason_field: "finish_reason", reason_value: v, extras };
    },
  };
}

/** The built-in detector set (used when `detectors` is not configured). */
export function defaultSafetyDetectors(): SafetyTerminationDetector[] {
  return [openAICompatibleContentFilterDetector(), anthropicRefusalDetector(), geminiSafetyDetector()];
}

type DetectorFactory = (config: Record<string, unknown>) => SafetyTerminationDetector;

/**
 * Built-in detectors by `use:` path: DeerFlow's class paths and short names
 * (so DeerFlow's config.yaml `detectors:` entries resolve unchanged).
 */
export const SAFETY_DETECTOR_REGISTRY: Readonly<Record<string, DetectorFactory>> = {
  "deerflow.agents.middlewares.safety_termination_detectors:OpenAICompatibleContentFilterDetector": openAICompatibleContentFilterDetector as DetectorFactory,
  "deerflow.agents.middlewares.safety_termination_detectors:AnthropicRefusalDetector": anthropicRefusalDetector as DetectorFactory,
  "deerflow.agents.middlewares.safety_termination_detectors:GeminiSafetyDetector": geminiSafetyDetector as DetectorFactory,
  openai_compatible_content_filter: openAICompatibleContentFilterDetector as DetectorFactory,
  anthropic_refusal: anthropicRefusalDetector as DetectorFactory,
  gemini_safety: geminiSafetyDetector as DetectorFactory,
};
