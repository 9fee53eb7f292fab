import type { ModelConfig } from "../config";
import { MODEL_META_KEYS } from "../config";
import { ModelConfigError } from "../errors";
import { deepMerge } from "./request-fetch";
import type { ReasoningEffort } from "./types";

/** Inputs of {@link buildModelKwargs}. */
export interface ThinkingOptions {
  thinkingEnabled: boolean;
  reasoningEffort?: ReasoningEffort | null;
  /** Agent-level overrides (`temperature`, `max_tokens`…); null/undefined values are ignored. */
  overrides?: Record<string, unknown>;
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
 * DeerFlow's `create_chat_model` rules, producing the provider kwargs of a
 * model entry (snake_case, as in config.yaml):
 * - every non-meta key passes through; agent overrides apply over it;
 * - the `thinking:` shortcut merges into `when_thinking_enabled.thinking`;
 * - thinking on: `when_thinking_enabled` is merged (caller must have checked `supports_thinking`);
 * - thinking off: `when_thinking_disabled`, else `extra_body.thinking={type:disabled}` +
 *   `reasoning_effort=minimal`, else vLLM `chat_template_kwargs` flags set false,
 *   else native Anthropic `thinking={type:disabled}`;
 * - `reasoning_effort` is dropped unless `supports_reasoning_effort`.
 */
export function buildModelKwargs(model: ModelConfig, options: ThinkingOptions): Record<string, unknown> {
  let kwargs: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(model)) {
    if (MODEL_META_KEYS.has(k) || v === null || v === undefined) continue;
    kwargs[k] = v;
  }
  for (const [k, v] of Object.entries(options.overrides ?? {})) if (v !== null && v !== undefined) kwargs[k] = v;

  const wte: Record<string, unknown> = { ...(model.when_thinking_enabled ?? {}) };
  if (model.thinking) wte.thinking = { ...(isRecord(wte.thinking) ? wte.thinking : {}), ...model.thinking };
  const hasThinkingSettings = model.when_thinking_enabled != null || model.thinking != null;

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
    kwargs.reasoning_effort = "minimal";
  } else if (hasThinkingSettings && isRecord(get(wte, "extra_body", "chat_template_kwargs"))) {
    const ctk = get(wte, "extra_body", "chat_template_kwargs") as Record<string, unknown>;
    const off: Record<string, unknown> = {};
    for (const key of ["thinking", "enable_thinking"]) if (key in ctk) off[key] = false;
    if (Object.keys(off).length) kwargs = deepMerge(kwargs, { extra_body: { chat_template_kwargs: off } });
  } else if (hasThinkingSettings && get(wte, "thinking", "type")) {
    kwargs.thinking = { type: "disabled" };
  }

  if (options.reasoningEffort) kwargs.reasoning_effort = options.reasoningEffort;
  if (!model.supports_reasoning_effort) delete kwargs.reasoning_effort;
  return kwargs;
}
