import type { ModelConfig } from "../config";
import { MODEL_META_KEYS } from "../config";
import { ModelConfigError } from "../errors";
import { deepMerge } from "./request-fetch";
import { isReasoningEffort, REASONING_EFFORTS } from "./types";
import type { ReasoningEffort } from "./types";

/** Inputs of {@link resolveModelSettings}. */
export interface ThinkingOptions {
  thinkingEnabled: boolean;
  reasoningEffort?: ReasoningEffort | null;
  /** Agent-level overrides (`temperature`, `max_tokens`…); null/undefined values are ignored. */
  overrides?: Record<string, unknown>;
}

/** What {@link resolveModelSettings} decides for one model entry and one run's settings. */
export interface ResolvedModelSettings {
  /** The provider kwargs (snake_case, as in config.yaml), without `reasoning_effort`. */
  kwargs: Record<string, unknown>;
  /** The reasoning effort every call of the model sends, or null for none. */
  reasoningEffort: ReasoningEffort | null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

function get(obj: unknown, ...keys: string[]): unknown {
  let cur = obj;
  for (const k of keys) cur = isRecord(cur) ? cur[k] : undefined;
  return cur;
}

/**
 * DeerFlow's `create_chat_model` rules for a model entry:
 * - every non-meta key passes through; agent overrides apply over it;
 * - the `thinking:` shortcut merges into `when_thinking_enabled.thinking`;
 * - thinking on: `when_thinking_enabled` is merged (caller must have checked `supports_thinking`);
 * - thinking off: `when_thinking_disabled`, else `extra_body.thinking={type:disabled}` +
 *   reasoning effort `minimal`, else vLLM `chat_template_kwargs` flags set false,
 *   else native Anthropic `thinking={type:disabled}`;
 * - reasoning effort: the request's, else the one the rules above set, else the
 *   entry's `reasoning_effort` key; none unless `supports_reasoning_effort`.
 *
 * The effort comes out as a typed value, apart from the kwargs: the provider
 * mapping turns it into each provider's own field.
 */
export function resolveModelSettings(model: ModelConfig, options: ThinkingOptions): ResolvedModelSettings {
  let kwargs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(model)) {
    if (MODEL_META_KEYS.has(k) || v === null || v === undefined) continue;
    kwargs[k] = v;
  }
  for (const [k, v] of Object.entries(options.overrides ?? {})) if (v !== null && v !== undefined) kwargs[k] = v;

  const wte: Record<string, unknown> = { ...(model.when_thinking_enabled ?? {}) };
  if (model.thinking) wte.thinking = { ...(isRecord(wte.thinking) ? wte.thinking : {}), ...model.thinking };
  const hasThinkingSettings = model.when_thinking_enabled != null || model.thinking != null;
  let ruleEffort: ReasoningEffort | undefined;

  if (options.thinkingEnabled) {
    if (hasThinkingSettings) {
      if (!model.supports_thinking) {
        throw new ModelConfigError(`Model "${model.name}" has thinking settings but supports_thinking is false.`, {
          details: { model: model.name },
        });
      }
      kwargs = deepMerge(kwargs, wte);
    }
  } else if (model.when_thinking_disabled != null) {
    kwargs = deepMerge(kwargs, model.when_thinking_disabled);
  } else if (hasThinkingSettings && get(wte, "extra_body", "thinking", "type")) {
    kwargs = deepMerge(kwargs, { extra_body: { thinking: { type: "disabled" } } });
    ruleEffort = "minimal";
  } else if (hasThinkingSettings && isRecord(get(wte, "extra_body", "chat_template_kwargs"))) {
    const ctk = get(wte, "extra_body", "chat_template_kwargs") as Record<string, unknown>;
    const off: Record<string, unknown> = {};
    for (const key of ["thinking", "enable_thinking"]) if (key in ctk) off[key] = false;
    if (Object.keys(off).length) kwargs = deepMerge(kwargs, { extra_body: { chat_template_kwargs: off } });
  } else if (hasThinkingSettings && get(wte, "thinking", "type")) {
    kwargs.thinking = { type: "disabled" };
  }

  // The entry's own key (or a when_thinking_* block's) is the model's default effort; it never reaches the wire as a raw key.
  const configured = kwargs.reasoning_effort;
  delete kwargs.reasoning_effort;
  if (configured !== undefined && configured !== null && !isReasoningEffort(configured)) {
    throw new ModelConfigError(
      `Model "${model.name}": reasoning_effort must be one of ${REASONING_EFFORTS.join(", ")} (got ${JSON.stringify(configured)}).`,
      { code: "model_config_invalid", details: { model: model.name, key: "reasoning_effort" } },
    );
  }
  const effort = options.reasoningEffort ?? ruleEffort ?? (configured as ReasoningEffort | null | undefined) ?? null;
  return { kwargs, reasoningEffort: model.supports_reasoning_effort ? effort : null };
}
