import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelConfig } from "../config";
import { ModelConfigError } from "../errors";
import { AiSdkChatModel } from "./ai-sdk-chat-model";
import { lazyLanguageModel } from "./lazy-language-model";
import type { SettingsMapper } from "./ai-sdk-chat-model";
import type { ProviderSpec } from "./provider-registry";
import { createRequestFetch, deepMerge } from "./request-fetch";
import type { FetchFunction } from "./request-fetch";
import type { ResolvedModelSettings } from "./thinking";
import type { ModelSettings, ReasoningEffort, ThinkingSetting } from "./types";

/** The efforts Anthropic's `output_config.effort` takes (the others are not sent to Anthropic). */
const ANTHROPIC_EFFORTS: ReadonlySet<ReasoningEffort> = new Set(["low", "medium", "high", "xhigh"]);

const API_KEY_KEYS = ["api_key", "openai_api_key", "anthropic_api_key", "gemini_api_key", "google_api_key", "deepseek_api_key"];
const BASE_URL_KEYS = ["base_url", "api_base", "openai_api_base", "anthropic_api_url", "base"];
const TIMEOUT_KEYS = ["timeout", "request_timeout", "default_request_timeout"];
const MAX_TOKENS_KEYS = ["max_tokens", "num_predict", "max_completion_tokens", "max_output_tokens"];
/** Client-side knobs of LangChain classes that mean nothing on the wire. */
const DROPPED_KEYS = new Set([
  "model",
  "model_name",
  "max_retries",
  "streaming",
  "stream_usage",
  "verbose",
  "callbacks",
  "tags",
  "use_responses_api",
  "output_version",
  "cumulative_stream_usage",
  "stream_chunk_timeout",
  "temperature",
  "default_headers",
  "headers",
  "organization",
  "openai_organization",
]);

/** Options of {@link buildProviderChatModel}. */
export interface BuildProviderOptions {
  env?: Record<string, string | undefined>;
  /** Override fetch (tests). */
  fetch?: FetchFunction;
}

function take(kwargs: Record<string, unknown>, keys: readonly string[]): unknown {
  let found: unknown;
  for (const k of keys) {
    if (k in kwargs) {
      if (found === undefined && kwargs[k] !== undefined && kwargs[k] !== null && kwargs[k] !== "") found = kwargs[k];
      delete kwargs[k];
    }
  }
  return found;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** A model entry's native `thinking:` block (`budget_tokens` snake_case) as a typed setting. */
function anthropicThinking(v: unknown): ThinkingSetting | undefined {
  if (!isRecord(v) || typeof v.type !== "string") return undefined;
  const out: ThinkingSetting = { type: v.type };
  const budget = v.budget_tokens ?? v.budgetTokens;
  if (budget !== undefined) out.budgetTokens = Number(budget);
  if (v.display !== undefined) out.display = v.display as string;
  return out;
}

function numberOrUndefined(v: unknown): number | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** The AI SDK provider-options key of an OpenAI-compatible provider (the SDK reads it camel-cased). */
function compatibleOptionsKey(id: string): string {
  return id.replace(/[-_](\w)/g, (_m, c: string) => c.toUpperCase());
}

/**
 * Build a {@link AiSdkChatModel} for a model entry from its resolved
 * settings (see `resolveModelSettings`). Known kwargs map to AI SDK settings;
 * the rest (including `extra_body` / `model_kwargs`, flattened) are merged
 * into the request body. The typed settings are mapped here, per provider:
 * reasoning effort becomes OpenAI's and OpenAI-compatible servers'
 * `reasoning_effort` and Anthropic's `output_config.effort`, a native
 * `thinking:` block Anthropic's `thinking`. No provider retries
 * (`maxRetries` is owned by middleware).
 */
export function buildProviderChatModel(
  spec: ProviderSpec,
  model: ModelConfig,
  resolved: ResolvedModelSettings,
  options: BuildProviderOptions = {},
): AiSdkChatModel {
  const env = options.env ?? process.env;
  const kwargs = { ...resolved.kwargs };
  const modelId = model.model;
  let apiKey = take(kwargs, API_KEY_KEYS) as string | undefined;
  if (apiKey === undefined && spec.apiKeyEnv) apiKey = env[spec.apiKeyEnv] || undefined;
  if (apiKey === undefined && spec.id === "google") apiKey = env.GOOGLE_API_KEY || undefined;
  if (apiKey === undefined && !spec.apiKeyOptional) {
    throw new ModelConfigError(
      `Model "${model.name}" (use: ${model.use}) has no API key. Set \`api_key\` in its config.yaml entry ` +
        `(e.g. api_key: $${spec.apiKeyEnv ?? "API_KEY"})${spec.apiKeyEnv ? ` or the ${spec.apiKeyEnv} environment variable` : ""}.`,
      { code: "model_api_key_missing", details: { model: model.name } },
    );
  }
  let baseUrl = (take(kwargs, BASE_URL_KEYS) as string | undefined) ?? ((spec.baseUrlEnv && env[spec.baseUrlEnv]) || spec.defaultBaseUrl);
  if (!baseUrl) {
    throw new ModelConfigError(`Model "${model.name}" (use: ${model.use}) needs a base_url (the server's OpenAI-compatible /v1 endpoint).`, {
      code: "model_base_url_missing",
      details: { model: model.name },
    });
  }
  baseUrl = baseUrl.replace(/\/+$/, "");
  if ((spec.appendV1 || spec.family === "anthropic") && !/\/v\d+$/.test(baseUrl)) baseUrl += "/v1";

  const timeoutSec = numberOrUndefined(take(kwargs, TIMEOUT_KEYS));
  const chunkTimeoutSec = numberOrUndefined(kwargs.stream_chunk_timeout) ?? (spec.family !== "anthropic" ? 240 : undefined);
  const maxTokens = numberOrUndefined(take(kwargs, MAX_TOKENS_KEYS));
  const temperature = numberOrUndefined(kwargs.temperature);
  const headers = { ...(isRecord(kwargs.default_headers) ? kwargs.default_headers : {}), ...(isRecord(kwargs.headers) ? kwargs.headers : {}) } as Record<string, string>;
  const defaults: ModelSettings = { maxTokens, temperature, reasoningEffort: resolved.reasoningEffort ?? undefined };
  // Anthropic takes native thinking as an SDK option; elsewhere a `thinking` key is a plain body field.
  if (spec.family === "anthropic") {
    defaults.thinking = anthropicThinking(kwargs.thinking);
    delete kwargs.thinking;
  }
  if (spec.id === "ollama") delete kwargs.reasoning;

  // Everything left goes to the wire; extra_body / model_kwargs are flattened like LangChain does.
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(kwargs)) {
    if (DROPPED_KEYS.has(k) || v === undefined || v === null) continue;
    if ((k === "extra_body" || k === "model_kwargs") && isRecord(v)) Object.assign(body, v);
    else body[k] = v;
  }

  let make: (fetch: FetchFunction) => LanguageModelV3;
  let providerKey: string;
  let mapSettings: SettingsMapper;
  if (spec.family === "anthropic") {
    providerKey = "anthropic";
    make = (fetch) => lazyLanguageModel("anthropic.messages", modelId, async () => (await import("@ai-sdk/anthropic")).createAnthropic({ apiKey, baseURL: baseUrl, headers, fetch })(modelId));
    mapSettings = (s) => {
      const anthropic: Record<string, unknown> = { sendReasoning: true };
      if (s.thinking) anthropic.thinking = { ...s.thinking };
      if (s.reasoningEffort && ANTHROPIC_EFFORTS.has(s.reasoningEffort)) anthropic.effort = s.reasoningEffort;
      return { providerOptions: { anthropic } };
    };
  } else if (spec.family === "openai") {
    providerKey = "openai";
    make = (fetch) => lazyLanguageModel("openai.chat", modelId, async () => (await import("@ai-sdk/openai")).createOpenAI({ apiKey, baseURL: baseUrl, headers, fetch }).chat(modelId));
    mapSettings = (s) => (s.reasoningEffort ? { providerOptions: { openai: { reasoningEffort: s.reasoningEffort } } } : {});
  } else {
    providerKey = spec.id;
    const optionsKey = compatibleOptionsKey(spec.id);
    make = (fetch) =>
      lazyLanguageModel(`${spec.id}.chat`, modelId, async () => (await import("@ai-sdk/openai-compatible")).createOpenAICompatible({ name: spec.id, baseURL: baseUrl, apiKey, headers, fetch, includeUsage: true }).chatModel(modelId));
    mapSettings = (s) => (s.reasoningEffort ? { providerOptions: { [optionsKey]: { reasoningEffort: s.reasoningEffort } } } : {});
  }
  return new AiSdkChatModel({
    provider: spec.id,
    modelName: modelId,
    languageModel: make(createRequestFetch(body, options.fetch)),
    // Only a call that brings its own body fields pays for a model of its own.
    languageModelWithBody: (extra) => make(createRequestFetch(deepMerge(body, extra), options.fetch)),
    providerKey,
    defaults,
    requestTimeoutMs: timeoutSec !== undefined ? timeoutSec * 1000 : undefined,
    streamIdleTimeoutMs: chunkTimeoutSec !== undefined ? chunkTimeoutSec * 1000 : undefined,
    leadingSystemOnly: spec.family === "anthropic",
    mapSettings,
    baseUrl,
    // every header value counts: a custom auth header's name says nothing about it being one
    secrets: [apiKey, ...Object.values(headers)].filter((v): v is string => typeof v === "string" && v.length > 0),
  });
}
