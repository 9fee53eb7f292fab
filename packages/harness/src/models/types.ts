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

/** Reasoning effort levels understood across providers (DeerFlow's `reasoning_effort` values). */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;

/** Reasoning effort levels understood across providers. */
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** Whether `v` is one of {@link REASONING_EFFORTS}. */
export function isReasoningEffort(v: unknown): v is ReasoningEffort {
  return typeof v === "string" && (REASONING_EFFORTS as readonly string[]).includes(v);
}

/**
 * What a run asks of its model, as typed values from the request's edge
 * (`thinking_enabled`, `reasoning_effort`) through the agent and the model
 * factory to the provider mapping, which alone turns them into wire fields.
 */
export interface ModelCallSettings {
  /** Thinking requested; undefined = the default (on where the model supports it). */
  thinkingEnabled?: boolean;
  /** Reasoning effort requested; dropped for a model without `supports_reasoning_effort`. */
  reasoningEffort?: ReasoningEffort;
}

/**
 * Native extended thinking as the Anthropic API takes it (`thinking:` of a
 * model entry, `budget_tokens` as `budgetTokens`).
 */
export interface ThinkingSetting {
  /** `enabled`, `disabled` or `adaptive`. */
  type: string;
  budgetTokens?: number;
  display?: string;
}

/** Per-call settings. Providers ignore what they do not support. */
export interface ModelSettings {
  temperature?: number;
  maxTokens?: number;
  /**
   * Mapped per provider: OpenAI and OpenAI-compatible `reasoning_effort`,
   * Anthropic `output_config.effort` (`low`…`xhigh` only).
   */
  reasoningEffort?: ReasoningEffort;
  /** Anthropic extended thinking (other providers take thinking through their request-body keys). */
  thinking?: ThinkingSetting;
  /** Tool choice: `auto` (default), `none`, `required`, or one tool by name. */
  toolChoice?: "auto" | "none" | "required" | { name: string };
  /**
   * Extra request-body fields for this call (`extra_body` / `model_kwargs`
   * are flattened), merged over the model entry's own passthrough keys.
   */
  providerOptions?: Record<string, unknown>;
}

/** One model call. The system prompt travels as leading system message(s). */
export interface ModelRequest {
  messages: Message[];
  tools: ToolSpec[];
  settings?: ModelSettings;
  signal?: AbortSignal;
  /**
   * Who makes the call, in DeerFlow's caller names: `lead_agent` (the default when unset),
   * `middleware:title`, `suggest_agent`, `subagent:<type>`. Providers ignore it; the replay model
   * keys its recorded turns by it.
   */
  caller?: string;
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
