/** Run options the composer sends as `context` (DeerFlow's mode → flags mapping). */

/** DeerFlow chat modes. */
export type ChatMode = "flash" | "thinking" | "pro" | "ultra";

/** Reasoning effort levels. */
export type ReasoningEffort = "low" | "medium" | "high";

/** What the user picked in the toolbar. */
export interface ChatSettings {
  modelName?: string;
  thinking: boolean;
  planMode: boolean;
  reasoningEffort: ReasoningEffort;
  /** DeerFlow's "ultra" mode: the lead may delegate to sub-agents (`subagent_enabled`). */
  subagents?: boolean;
  /** Chat with this custom agent (`context.agent_name`). */
  agentName?: string;
}

/** What the composer needs to know of the selected model (a `GET /api/models` entry). */
export interface ModelCapabilities {
  supports_thinking?: boolean;
}

/**
 * Whether the composer may ask `model` for thinking. A model entry that does not say
 * `supports_thinking: true` cannot think (the server would only drop the flag with a warning);
 * with no model known yet (the list did not load) the server's default model decides.
 */
export function thinkingAvailable(model: ModelCapabilities | undefined): boolean {
  return model ? model.supports_thinking === true : true;
}

/**
 * The settings a run is sent with: the user's toolbar choices, less what the selected model
 * cannot do. The user's own choice is kept in `settings`, so picking a thinking model again
 * brings thinking back.
 */
export function effectiveSettings(settings: ChatSettings, models: readonly (ModelCapabilities & { name: string })[]): ChatSettings {
  const model = models.find((m) => m.name === settings.modelName);
  if (!settings.thinking || thinkingAvailable(model)) return settings;
  return { ...settings, thinking: false };
}

/** Builds the run `context` from the toolbar settings. */
export function buildRunContext(settings: ChatSettings, threadId: string): Record<string, unknown> {
  const mode: ChatMode = settings.subagents ? "ultra" : settings.planMode ? "pro" : settings.thinking ? "thinking" : "flash";
  const ctx: Record<string, unknown> = {
    mode,
    thinking_enabled: settings.thinking,
    is_plan_mode: settings.planMode,
    subagent_enabled: settings.subagents === true,
    reasoning_effort: settings.reasoningEffort,
    thread_id: threadId,
  };
  if (settings.modelName) ctx.model_name = settings.modelName;
  if (settings.agentName) ctx.agent_name = settings.agentName;
  return ctx;
}

/** A file the user uploaded, as sent in `additional_kwargs.files`. */
export interface UploadedFile {
  filename: string;
  size: number;
  path: string;
  status: "uploaded";
}

/** Builds the human message the UI submits (text block + uploaded files). */
export function buildHumanMessage(text: string, files: UploadedFile[] = []): Record<string, unknown> {
  const additional_kwargs: Record<string, unknown> = {};
  if (files.length) additional_kwargs.files = files;
  return { type: "human", content: [{ type: "text", text }], additional_kwargs };
}

/** Builds the hidden clarification answer message (`human_input_response`). */
export function buildClarificationAnswer(
  req: { requestId: string; source: string },
  answer: { optionId?: string; value: string },
): Record<string, unknown> {
  return {
    type: "human",
    content: [{ type: "text", text: answer.value }],
    additional_kwargs: {
      hide_from_ui: true,
      human_input_response: {
        version: 1,
        kind: "human_input_response",
        source: req.source,
        request_id: req.requestId,
        response_kind: answer.optionId ? "option" : "text",
        ...(answer.optionId ? { option_id: answer.optionId } : {}),
        value: answer.value,
      },
    },
  };
}
