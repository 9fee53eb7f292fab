import { z } from "zod";
import { ConfigError } from "../errors";
import { contentText } from "../messages";
import type { AIMessage } from "../messages";
import type { AgentMiddleware, HookResult } from "../runtime/types";
import type { AgentState } from "../state";
import { appendToContent, stripToolCalls } from "./loop-detection-strip";
import { defaultSafetyDetectors, SAFETY_DETECTOR_REGISTRY } from "./safety-finish-reason-detectors";
import type { SafetyTermination, SafetyTerminationDetector } from "./safety-finish-reason-detectors";
import { parseMiddlewareOptions } from "./zod-options";

/** `safety_finish_reason:` config section. */
export const safetyFinishReasonOptionsSchema = z.object({
  enabled: z.boolean().default(true),
  detectors: z
    .array(z.object({ use: z.string().min(1), config: z.record(z.string(), z.unknown()).nullish() }))
    .nullish(),
});

/** Options of {@link createSafetyFinishReasonMiddleware}. */
export type SafetyFinishReasonOptions = z.input<typeof safetyFinishReasonOptionsSchema> & {
  /** Detector objects to use instead of the configured/built-in set (embedding API). */
  detectorInstances?: SafetyTerminationDetector[];
};

const q = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/** Explanation appended when tool calls were suppressed. */
export function safetySuppressedText(t: SafetyTermination): string {
  return `The model provider stopped this response with a safety-related signal (${t.reason_field}=${q(t.reason_value)}, detector=${q(t.detector)}). Any tool calls produced in this turn were suppressed because their arguments may be truncated and unsafe to execute. Please rephrase the request or ask for a narrower output.`;
}

/** Explanation backfilled into an otherwise empty safety-terminated message. */
export function safetyEmptyText(t: SafetyTermination): string {
  return `The model provider stopped this response with a safety-related signal (${t.reason_field}=${q(t.reason_value)}, detector=${q(t.detector)}) and returned no content. Please rephrase your request or start a new conversation.`;
}

function resolveDetectors(o: z.output<typeof safetyFinishReasonOptionsSchema>, instances?: SafetyTerminationDetector[]): SafetyTerminationDetector[] {
  if (instances?.length) return [...instances];
  if (o.detectors == null) return defaultSafetyDetectors();
  if (o.detectors.length === 0) {
    throw new ConfigError(
      "safety_finish_reason.detectors must be omitted (use built-ins) or contain at least one entry; use enabled=false to disable the middleware entirely.",
      { details: { option: "safety_finish_reason.detectors" } },
    );
  }
  return o.detectors.map((entry, i) => {
    const factory = SAFETY_DETECTOR_REGISTRY[entry.use];
    if (!factory) {
      throw new ConfigError(`safety_finish_reason.detectors[${i}].use: unknown detector '${entry.use}'`, {
        details: { option: `safety_finish_reason.detectors[${i}].use`, known: Object.keys(SAFETY_DETECTOR_REGISTRY) },
      });
    }
    return factory({ ...(entry.config ?? {}) });
  });
}

/**
 * DeerFlow's `SafetyFinishReasonMiddleware`: when a provider safety signal
 * (`content_filter`, `refusal`, Gemini `SAFETY`…) comes with tool calls, the
 * calls are stripped (their arguments may be truncated) and an explanation is
 * appended; an empty safety-terminated message gets an explanation instead.
 * Sets the outcome's stop reason `safety_capped`, records
 * `additional_kwargs.safety_termination` and emits the `safety_termination`
 * custom event.
 */
export function createSafetyFinishReasonMiddleware(options: SafetyFinishReasonOptions = {}): AgentMiddleware {
  const { detectorInstances, ...rest } = options;
  const o = parseMiddlewareOptions("SafetyFinishReasonMiddleware", safetyFinishReasonOptionsSchema, rest);
  const detectors = resolveDetectors(o, detectorInstances);

  function detect(m: AIMessage): SafetyTermination | null {
    for (const d of detectors) {
      try {
        const hit = d.detect(m);
        if (hit) return hit;
      } catch {
        // a buggy detector never breaks a run
      }
    }
    return null;
  }

  return {
    name: "SafetyFinishReasonMiddleware",
    afterModel(state: AgentState, runtime): HookResult {
      if (!o.enabled) return;
      const last = state.messages[state.messages.length - 1];
      if (!last || last.type !== "ai") return;
      const calls = last.tool_calls ?? [];
      const blank = !contentText(last.content).trim();
      if (!calls.length && !blank) return;
      const t = detect(last);
      if (!t) return;
      runtime.outcome.setStopReason("safety_capped", { overwrite: true });
      const names = calls.map((c) => c.name || "unknown");
      const explanation = calls.length ? safetySuppressedText(t) : safetyEmptyText(t);
      const base = stripToolCalls(last);
      const patched: AIMessage = {
        ...base,
        content: last.content === "" ? explanation : appendToContent(last.content, explanation),
        additional_kwargs: {
          ...base.additional_kwargs,
          safety_termination: {
            detector: t.detector,
            reason_field: t.reason_field,
            reason_value: t.reason_value,
            suppressed_tool_call_count: names.length,
            suppressed_tool_call_names: names,
            extras: { ...t.extras },
          },
        },
      };
      try {
        runtime.writer({
          type: "safety_termination",
          detector: t.detector,
          reason_field: t.reason_field,
          reason_value: t.reason_value,
          suppressed_tool_call_count: names.length,
          suppressed_tool_call_names: names,
          thread_id: runtime.context.identity.threadId,
        });
      } catch {
        // best-effort signal
      }
      return { messages: [patched] };
    },
  };
}
