import type { AppConfig, ConfigLogger, ModelConfig } from "../config";
import { consoleConfigLogger, readEnv } from "../config";
import { ModelConfigError } from "../errors";
import { buildProviderChatModel } from "./provider-factory";
import type { BuildProviderOptions } from "./provider-factory";
import { resolveProvider } from "./provider-registry";
import type { ProviderSpec } from "./provider-registry";
import { appendReplayTurnTo, createRecordingChatModel, REPLAY_FIXTURE_ENV, REPLAY_RECORD_ENV, ReplayChatModel } from "./replay";
import { resolveModelSettings } from "./thinking";
import type { ChatModel, ModelCallSettings, ReasoningEffort } from "./types";

/** What the lead agent needs to know about the model it got. */
export interface ResolvedModelConfig {
  /** Config name of the model (after fallback). */
  name: string;
  displayName: string | null;
  description: string | null;
  /** The entry's `use:` as written. */
  use: string;
  /** Our provider id (`openai`, `anthropic`, `deepseek`…). */
  provider: string;
  /** The provider's model id. */
  model: string;
  supportsVision: boolean;
  supportsThinking: boolean;
  supportsReasoningEffort: boolean;
  contextWindow: number | null;
  maxTokens: number | null;
  /** Thinking as actually applied (false when downgraded). */
  thinkingEnabled: boolean;
  /** The effort every call sends (null: none, or the model lacks `supports_reasoning_effort`). */
  reasoningEffort: ReasoningEffort | null;
  /** The validated config entry. */
  entry: ModelConfig;
}

/**
 * Options of {@link createChatModel}: the run's typed {@link ModelCallSettings}
 * (thinking on by default, DeerFlow's default) and the agent's model choices.
 */
export interface CreateChatModelOptions extends BuildProviderOptions, Omit<ModelCallSettings, "reasoningEffort"> {
  /** Requested effort (null or undefined: the model entry's own, if any). */
  reasoningEffort?: ReasoningEffort | null;
  /** Agent overrides (`temperature`, `max_tokens`…); null values ignored. */
  overrides?: Record<string, unknown>;
  /** The custom agent's model, used when no name is requested. */
  agentModel?: string | null;
  logger?: ConfigLogger;
}

/** The result of {@link createChatModel}. */
export interface CreatedChatModel {
  model: ChatModel;
  config: ResolvedModelConfig;
  warnings: string[];
}

/**
 * Pick a model entry by DeerFlow's chain: requested name → agent's model →
 * `models[0]`. An unknown name falls back to the first model with a warning;
 * no models at all is a {@link ModelConfigError}.
 */
export function resolveModelEntry(
  appConfig: Pick<AppConfig, "models">,
  requested?: string | null,
  agentModel?: string | null,
): { entry: ModelConfig; warnings: string[] } {
  const models = appConfig.models;
  if (!models.length) {
    throw new ModelConfigError("No chat models are configured. Add at least one entry under `models:` in config.yaml.", {
      code: "model_none_configured",
    });
  }
  const name = requested || agentModel || null;
  if (!name) return { entry: models[0], warnings: [] };
  const found = models.find((m) => m.name === name);
  if (found) return { entry: found, warnings: [] };
  return {
    entry: models[0],
    warnings: [`Model "${name}" is not configured; falling back to the default model "${models[0].name}".`],
  };
}

/**
 * The error for a requested model name that is not configured: one wording for
 * the CLI (`--model`) and the gateway (`model_name` in `context` or
 * `configurable`), listing the names that are. Undefined when the name is
 * configured (or there is no model list to check it against).
 */
export function unknownModelError(name: string, models: ReadonlyArray<object>): ModelConfigError | undefined {
  const names = models.map((m) => String((m as { name?: unknown }).name));
  if (!names.length || names.includes(name)) return undefined;
  return new ModelConfigError(`Model "${name}" is not configured. Configured models: ${names.join(", ")} (under \`models:\` in config.yaml).`, {
    code: "model_unknown",
    details: { model_name: name, configured: names },
  });
}

/** The `use:` values of the replay model: ours and DeerFlow's test class path. */
const REPLAY_USES = new Set(["replay", "replay_provider:ReplayChatModel"]);

/** Whether a model entry's `use:` selects the {@link ReplayChatModel}. */
export function isReplayUse(use: string): boolean {
  return REPLAY_USES.has(use.trim());
}

/** The replay model of an entry: its `fixture:` key, else `DEERFLOW_REPLAY_FIXTURE`. */
function replayModel(entry: ModelConfig, env: Record<string, string | undefined>): ReplayChatModel {
  const fixture = (entry as { fixture?: unknown }).fixture ?? readEnv(REPLAY_FIXTURE_ENV, env);
  if (typeof fixture !== "string" || !fixture.trim()) {
    throw new ModelConfigError(`Model "${entry.name}" uses the replay model but names no fixture: set \`fixture: <path to a fixture .json>\` on it under \`models:\` in config.yaml (or ${REPLAY_FIXTURE_ENV}).`, {
      code: "model_replay_fixture_missing",
      details: { model: entry.name },
    });
  }
  return new ReplayChatModel({ fixture: fixture.trim() });
}

/**
 * Create the chat model named `name` from the app config, applying DeerFlow's
 * resolution chain and thinking rules. Thinking requested explicitly on a
 * model without `supports_thinking` is downgraded with a warning.
 */
export function createChatModel(appConfig: Pick<AppConfig, "models">, name?: string | null, options: CreateChatModelOptions = {}): CreatedChatModel {
  const logger = options.logger ?? consoleConfigLogger;
  const { entry, warnings } = resolveModelEntry(appConfig, name, options.agentModel);
  let thinkingEnabled = options.thinkingEnabled ?? true;
  if (thinkingEnabled && !entry.supports_thinking) {
    if (options.thinkingEnabled === true) {
      warnings.push(`Thinking was requested but model "${entry.name}" does not set supports_thinking; continuing without thinking.`);
    }
    thinkingEnabled = false;
  }
  const replay = isReplayUse(entry.use);
  const spec: ProviderSpec = replay ? { id: "replay", family: "openai-compatible" } : resolveProvider(entry.use, entry.name);
  const resolved = resolveModelSettings(entry, { thinkingEnabled, reasoningEffort: options.reasoningEffort, overrides: options.overrides });
  const env = options.env ?? process.env;
  let model: ChatModel = replay ? replayModel(entry, env) : buildProviderChatModel(spec, entry, resolved, options);
  const recordTo = readEnv(REPLAY_RECORD_ENV, env);
  if (recordTo) model = createRecordingChatModel(model, appendReplayTurnTo(recordTo));
  for (const w of warnings) logger.warn(w);
  const maxTokens = resolved.kwargs.max_tokens ?? entry.max_tokens;
  return {
    model,
    warnings,
    config: {
      name: entry.name,
      displayName: entry.display_name,
      description: entry.description,
      use: entry.use,
      provider: spec.id,
      model: entry.model,
      supportsVision: entry.supports_vision,
      supportsThinking: entry.supports_thinking,
      supportsReasoningEffort: entry.supports_reasoning_effort,
      contextWindow: entry.context_window,
      maxTokens: typeof maxTokens === "number" ? maxTokens : null,
      thinkingEnabled,
      reasoningEffort: resolved.reasoningEffort,
      entry,
    },
  };
}
