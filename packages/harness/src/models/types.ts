import type { Message, UsageMetadata } from "../messages";

/** A JSON schema object as sent to providers. */
export type JsonSchema = Record<string, unknown>;

/** What the model sees of a tool. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: JsonSchema;
}

/** Reasoning effort levels understood across providers. */
export type ReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** Per-call settings. Providers ignore what they do not support. */
export interface ModelSettings {
  temperature?: number;
  maxTokens?: number;
  reasoningEffort?: ReasoningEffort;
  /** Tool choice: `auto` (default), `none`, `required`, or one tool by name. */
  toolChoice?: "auto" | "none" | "required" | { name: string };
  /** Provider-specific options merged into the request body (e.g. `thinking`, `extra_body`). */
  providerOptions?: Record<string, unknown>;
}

/** One model call. The system prompt travels as leading system message(s). */
export interface ModelRequest {
  messages: Message[];
  tools: ToolSpec[];
  settings?: ModelSettings;
  signal?: AbortSignal;
}

/**
 * The parts a model streams. A stream ends with exactly one `finish` part;
 * a failure is thrown (as a `ModelCallError`) from the iterator.
 */
export type ModelStreamPart =
  | { type: "text-delta"; text: string }
  | { type: "reasoning-delta"; text: string }
  | {
      type: "tool-call-delta";
      /** Position of the tool call in this response (0-based). */
      index: number;
      id?: string;
      name?: string;
      /** A fragment of the JSON arguments text. */
      argsDelta: string;
    }
  | {
      type: "finish";
      /** OpenAI-style finish reason: `stop`, `tool_calls`, `length`, `content_filter`… */
      finishReason: string;
      usage?: UsageMetadata;
      /** Extra provider metadata (model name, provider response id…). */
      responseMetadata?: Record<string, unknown>;
      /** Provider message id, when the provider gives one. */
      messageId?: string;
    };

/** A chat model the runtime can call. Providers and test doubles implement it. */
export interface ChatModel {
  /** Provider family, e.g. `openai`, `anthropic`, `scripted`. */
  readonly provider: string;
  /** The provider's model id, e.g. `gpt-4o`. */
  readonly modelName: string;
  /** Stream one response. */
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
