import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart, LanguageModelV3Usage } from "@ai-sdk/provider";
import { ModelCallError, ModelConfigError } from "../errors";
import type { UsageMetadata } from "../messages";
import { toModelCallError } from "./provider-errors";
import { deepMerge } from "./request-fetch";
import type { ChatModel, ModelRequest, ModelSettings, ModelStreamPart } from "./types";
import { toV3Prompt, toV3ToolChoice, toV3Tools } from "./v3-prompt";

/**
 * How per-call settings become AI SDK provider options (the typed path:
 * reasoning effort, thinking) and, for what has no SDK option, extra
 * request-body fields.
 */
export type SettingsMapper = (settings: ModelSettings) => {
  providerOptions?: Record<string, Record<string, unknown>>;
  extraBody?: Record<string, unknown>;
};

/** Options of {@link AiSdkChatModel}. */
export interface AiSdkChatModelOptions {
  /** Provider id reported on the model (`openai`, `deepseek`…). */
  provider: string;
  /** Model id. */
  modelName: string;
  languageModel: LanguageModelV3;
  /**
   * The same model sending `body` merged into its request bodies: used for a
   * call that brings body fields of its own (`settings.providerOptions`).
   * Without it such a call is refused.
   */
  languageModelWithBody?: (body: Record<string, unknown>) => LanguageModelV3;
  /** Key of this provider in AI SDK provider options/metadata (`openai`, `anthropic`, or the compatible provider's name). */
  providerKey: string;
  /** Default settings from the model config; per-call settings override them. */
  defaults?: ModelSettings;
  /** Maximum time to the first stream part (ms). */
  requestTimeoutMs?: number;
  /** Maximum silence between stream parts (ms). */
  streamIdleTimeoutMs?: number;
  /** Send non-leading system messages as user turns. */
  leadingSystemOnly?: boolean;
  mapSettings?: SettingsMapper;
  /**
   * The credentials this model sends (its API key, its configured header
   * values): scrubbed from every error text wherever they occur, since a
   * proxy may quote them in prose that no credential pattern recognises.
   */
  secrets?: readonly string[];
  /** The endpoint the model calls: named in a refused connection's error (credentials in it are masked). */
  baseUrl?: string;
}

/** Merge default and per-call settings (call wins; provider options merge deeply). */
export function mergeSettings(defaults: ModelSettings = {}, call: ModelSettings = {}): ModelSettings {
  const out: ModelSettings = { ...defaults };
  for (const [k, v] of Object.entries(call)) if (v !== undefined && k !== "providerOptions") (out as Record<string, unknown>)[k] = v;
  if (defaults.providerOptions || call.providerOptions) {
    out.providerOptions = deepMerge(defaults.providerOptions ?? {}, call.providerOptions ?? {});
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** A call's own body fields: its `providerOptions` (`extra_body` / `model_kwargs` flattened) and the mapper's; undefined when none. */
function callBody(providerOptions: Record<string, unknown> | undefined, mapped: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!providerOptions && !mapped) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(providerOptions ?? {})) {
    if ((k === "extra_body" || k === "model_kwargs") && isRecord(v)) Object.assign(out, v);
    else if (v !== undefined) out[k] = v;
  }
  Object.assign(out, mapped);
  return Object.keys(out).length ? out : undefined;
}

function toUsage(u: LanguageModelV3Usage | undefined): UsageMetadata | undefined {
  if (!u) return undefined;
  const input = u.inputTokens?.total;
  const output = u.outputTokens?.total;
  if (input === undefined && output === undefined) return undefined;
  const usage: UsageMetadata = { input_tokens: input ?? 0, output_tokens: output ?? 0, total_tokens: (input ?? 0) + (output ?? 0) };
  const inDetails: Record<string, number> = {};
  if (u.inputTokens?.cacheRead) inDetails.cache_read = u.inputTokens.cacheRead;
  if (u.inputTokens?.cacheWrite) inDetails.cache_creation = u.inputTokens.cacheWrite;
  if (Object.keys(inDetails).length) usage.input_token_details = inDetails;
  if (u.outputTokens?.reasoning) usage.output_token_details = { reasoning: u.outputTokens.reasoning };
  return usage;
}

const FINISH: Record<string, string> = {
  stop: "stop",
  "tool-calls": "tool_calls",
  length: "length",
  "content-filter": "content_filter",
  error: "error",
};

/**
 * Adapts an AI SDK `LanguageModelV3` to our {@link ChatModel}: converts
 * messages to the V3 prompt, streams text/reasoning/tool-call deltas, reports
 * usage and OpenAI-style finish reasons, and turns every failure into a
 * {@link ModelCallError}. It never retries (the retry middleware does).
 */
export class AiSdkChatModel implements ChatModel {
  readonly provider: string;
  readonly modelName: string;
  readonly options: AiSdkChatModelOptions;

  constructor(options: AiSdkChatModelOptions) {
    this.options = options;
    this.provider = options.provider;
    this.modelName = options.modelName;
  }

  /** The language model for a call with these extra body fields (the shared one when there are none). */
  private languageModelFor(body: Record<string, unknown> | undefined): LanguageModelV3 {
    if (!body) return this.options.languageModel;
    if (!this.options.languageModelWithBody) {
      throw new ModelConfigError(`${this.provider} model "${this.modelName}" takes no per-call request-body fields (settings.providerOptions: ${Object.keys(body).join(", ")}).`);
    }
    return this.options.languageModelWithBody(body);
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const o = this.options;
    const settings = mergeSettings(o.defaults, request.settings);
    const mapped = o.mapSettings ? o.mapSettings(settings) : {};
    const languageModel = this.languageModelFor(callBody(settings.providerOptions, mapped.extraBody));
    const controller = new AbortController();
    const outer = request.signal;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) throw outer.reason ?? new Error("aborted");
    outer?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    let timeoutMs: number | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (ms: number | undefined) => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (!ms || ms <= 0) return;
      timeoutMs = ms;
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error(`timed out after ${ms} ms`));
      }, ms);
    };
    const fail = (err: unknown): unknown => {
      if (outer?.aborted) return outer.reason ?? err;
      return toModelCallError(err, { provider: o.provider, model: o.modelName, timedOut, timeoutMs, secrets: o.secrets, baseUrl: o.baseUrl });
    };

    const call: LanguageModelV3CallOptions = {
      prompt: toV3Prompt(request.messages, { providerKey: o.providerKey, leadingSystemOnly: o.leadingSystemOnly }),
      tools: request.tools.length ? toV3Tools(request.tools) : undefined,
      toolChoice: request.tools.length ? toV3ToolChoice(settings.toolChoice) : undefined,
      maxOutputTokens: settings.maxTokens,
      temperature: settings.temperature,
      providerOptions: mapped.providerOptions as LanguageModelV3CallOptions["providerOptions"],
      abortSignal: controller.signal,
      includeRawChunks: false,
    };

    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
    try {
      arm(o.requestTimeoutMs);
      let result;
      try {
        result = await languageModel.doStream(call);
      } catch (err) {
        throw fail(err);
      }
      reader = result.stream.getReader();
      const indexById = new Map<string, number>();
      const streamedArgs = new Map<string, string>();
      let nextIndex = 0;
      const metadata: Record<string, unknown> = {};
      let messageId: string | undefined;
      let finished = false;
      const capture = (pm: unknown) => {
        const sig = (pm as Record<string, Record<string, unknown>> | undefined)?.[o.providerKey]?.signature;
        if (typeof sig === "string" && sig) metadata.reasoning_signature = sig;
      };
      while (true) {
        arm(o.streamIdleTimeoutMs ?? o.requestTimeoutMs);
        let next: ReadableStreamReadResult<LanguageModelV3StreamPart>;
        try {
          next = await reader.read();
        } catch (err) {
          throw fail(err);
        }
        if (next.done) break;
        const part = next.value;
        switch (part.type) {
          case "text-delta":
            if (part.delta) yield { type: "text-delta", text: part.delta };
            break;
          case "reasoning-start":
          case "reasoning-end":
            capture(part.providerMetadata);
            break;
          case "reasoning-delta":
            capture(part.providerMetadata);
            if (part.delta) yield { type: "reasoning-delta", text: part.delta };
            break;
          case "tool-input-start": {
            const index = nextIndex++;
            indexById.set(part.id, index);
            streamedArgs.set(part.id, "");
            yield { type: "tool-call-delta", index, id: part.id, name: part.toolName, argsDelta: "" };
            break;
          }
          case "tool-input-delta": {
            const index = indexById.get(part.id);
            if (index === undefined || !part.delta) break;
            streamedArgs.set(part.id, (streamedArgs.get(part.id) ?? "") + part.delta);
            yield { type: "tool-call-delta", index, argsDelta: part.delta };
            break;
          }
          case "tool-call": {
            if (part.providerExecuted) break;
            const seen = indexById.get(part.toolCallId);
            if (seen === undefined) {
              const index = nextIndex++;
              indexById.set(part.toolCallId, index);
              yield { type: "tool-call-delta", index, id: part.toolCallId, name: part.toolName, argsDelta: part.input };
            } else if (!streamedArgs.get(part.toolCallId) && part.input) {
              yield { type: "tool-call-delta", index: seen, argsDelta: part.input };
            }
            break;
          }
          case "response-metadata":
            if (part.id) {
              metadata.id = part.id;
              messageId = part.id;
            }
            if (part.modelId) metadata.model_name = part.modelId;
            break;
          case "error":
            throw fail(part.error);
          case "finish": {
            capture(part.providerMetadata);
            if (part.finishReason.unified === "other" && part.finishReason.raw === undefined) {
              throw new ModelCallError(`${o.provider} model "${o.modelName}": the response stream ended before the model finished.`, {
                kind: "connection",
                providerCode: "incomplete_stream",
              });
            }
            finished = true;
            const finishReason = FINISH[part.finishReason.unified] ?? part.finishReason.raw ?? "stop";
            if (part.finishReason.raw) metadata.raw_finish_reason = part.finishReason.raw;
            metadata.model_provider = o.provider;
            if (!metadata.model_name) metadata.model_name = o.modelName;
            yield { type: "finish", finishReason, usage: toUsage(part.usage), responseMetadata: { ...metadata }, messageId };
            break;
          }
          default:
            break;
        }
      }
      if (!finished) {
        throw new ModelCallError(`${o.provider} model "${o.modelName}": the response stream ended without a finish event.`, {
          kind: "connection",
          providerCode: "incomplete_stream",
        });
      }
    } finally {
      if (timer) clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
      if (reader) {
        reader.cancel().catch(() => {});
      }
      if (!controller.signal.aborted) controller.abort();
    }
  }
}
