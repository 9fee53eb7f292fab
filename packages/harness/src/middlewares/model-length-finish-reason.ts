import type { AIMessage } from "../messages";
import type { AgentMiddleware, HookResult } from "../runtime/types";
import type { AgentState } from "../state";
import { metadataValue } from "./safety-finish-reason-detectors";

/** Stop reason recorded for a length-capped final answer. */
export const MODEL_LENGTH_CAPPED_STOP_REASON = "model_length_capped";

/** A detected provider output-length cap. */
export interface ModelLengthTermination {
  detector: string;
  reason_field: string;
  reason_value: string;
}

/** Strategy interface for provider length-cap detection. */
export interface ModelLengthTerminationDetector {
  readonly name: string;
  detect(message: AIMessage): ModelLengthTermination | null;
}

function fieldDetector(name: string, field: string, values: string[], upper: boolean): ModelLengthTerminationDetector {
  const norm = (s: string) => (upper ? s.toUpperCase() : s.toLowerCase());
  const set = new Set(values.map(norm));
  return {
    name,
    detect(message) {
      const v = metadataValue(message, field);
      if (!v || !set.has(norm(v))) return null;
      return { detector: name, reason_field: field, reason_value: v };
    },
  };
}

/** Built-in detectors: OpenAI `finish_reason=length`, Anthropic `stop_reason=max_tokens`, Gemini `MAX_TOKENS`. */
export function defaultModelLengthDetectors(): ModelLengthTerminationDetector[] {
  return [
    fieldDetector("openai_compatible_length", "finish_reason", ["length"], false),
    fieldDetector("anthropic_max_tokens", "stop_reason", ["max_tokens"], false),
    fieldDetector("gemini_max_tokens", "finish_reason", ["MAX_TOKENS"], true),
  ];
}

function visible(m: AIMessage): boolean {
  if (typeof m.content === "string") return m.content.trim().length > 0;
  return m.content.some(
    (b) => (b.type === "text" || b.type === "output_text") && typeof (b as { text?: unknown }).text === "string" && (b as { text: string }).text.trim().length > 0,
  );
}

/** Options of {@link createModelLengthFinishReasonMiddleware}. */
export interface ModelLengthFinishReasonOptions {
  detectors?: ModelLengthTerminationDetector[];
}

/**
 * DeerFlow's `ModelLengthFinishReasonMiddleware`: a final answer with visible
 * content, no tool intent, and a provider length signal sets
 * the outcome's stop reason `model_length_capped` (unless a stop reason is
 * already set). The content is never changed.
 */
export function createModelLengthFinishReasonMiddleware(options: ModelLengthFinishReasonOptions = {}): AgentMiddleware {
  const detectors = options.detectors?.length ? [...options.detectors] : defaultModelLengthDetectors();
  return {
    name: "ModelLengthFinishReasonMiddleware",
    afterModel(state: AgentState, runtime): HookResult {
      const last = state.messages[state.messages.length - 1];
      if (!last || last.type !== "ai") return;
      if (last.tool_calls.length || last.invalid_tool_calls?.length) return;
      if (last.additional_kwargs?.tool_calls || last.additional_kwargs?.function_call) return;
      if (!visible(last)) return;
      for (const d of detectors) {
        let hit: ModelLengthTermination | null = null;
        try {
          hit = d.detect(last);
        } catch {
          continue;
        }
        if (hit) {
          // A stop reason set earlier in the run (loop, budget) is the more telling one.
          runtime.outcome.setStopReason(MODEL_LENGTH_CAPPED_STOP_REASON);
          return;
        }
      }
    },
  };
}
