import { aiMessage, newAIMessageId } from "../messages";
import type { AIMessage, AIMessageChunk, InvalidToolCall, ToolCall, UsageMetadata } from "../messages";
import { newToolCallId } from "../messages";
import type { ModelStreamPart } from "./types";
import { chunkToolCalls } from "./chunk-tool-calls";

interface PendingCall {
  index: number;
  id?: string;
  name?: string;
  args: string;
}

/** LangChain's usage shape: token detail maps are always present. */
function withDetails(u: UsageMetadata): UsageMetadata {
  return { ...u, input_token_details: u.input_token_details ?? {}, output_token_details: u.output_token_details ?? {} };
}

/**
 * Folds a model's stream parts into stream chunks (for `messages-tuple`) and
 * finally into one {@link AIMessage}. Tool-call argument text is parsed at the
 * end; unparsable arguments become `invalid_tool_calls`.
 */
export class AIMessageAccumulator {
  readonly id: string;
  private text = "";
  private reasoning = "";
  private calls = new Map<number, PendingCall>();
  private finishReason = "stop";
  private usage: UsageMetadata | null = null;
  private responseMetadata: Record<string, unknown> = {};

  /**
   * `provider` (`model_provider`, `model_name`) is reported as LangChain
   * does: `model_provider` on every chunk, both on the finish chunk and the
   * complete message.
   */
  constructor(
    id: string = newAIMessageId(),
    private readonly provider?: { model_provider: string; model_name: string },
  ) {
    this.id = id;
  }

  /**
   * Add one part; returns the chunk to stream (or null for parts that carry no delta). With `wantChunk` false
   * (nobody streams the run's messages) the part is only folded in and null is returned: a run that is not
   * streamed builds no chunk objects per part.
   */
  push(part: ModelStreamPart, wantChunk = true): AIMessageChunk | null {
    switch (part.type) {
      case "text-delta":
        if (!part.text) return null;
        this.text += part.text;
        return wantChunk ? this.chunk({ content: part.text }) : null;
      case "reasoning-delta":
        if (!part.text) return null;
        this.reasoning += part.text;
        return wantChunk ? this.chunk({ content: "", additional_kwargs: { reasoning_content: part.text } }) : null;
      case "tool-call-delta": {
        let call = this.calls.get(part.index);
        if (!call) {
          call = { index: part.index, args: "" };
          this.calls.set(part.index, call);
        }
        if (part.id) call.id = part.id;
        if (part.name) call.name = (call.name ?? "") + part.name;
        call.args += part.argsDelta ?? "";
        if (!wantChunk) return null;
        // as LangChain streams it: the fragment as it came (id and name on the first one only), and what its own
        // argument text reads as (a call, or an invalid call while the text is not an object yet)
        const fragment = { type: "tool_call_chunk" as const, index: part.index, id: part.id ?? null, name: part.name ?? null, args: part.argsDelta ?? "" };
        return this.chunk({ content: "", tool_call_chunks: [fragment], ...chunkToolCalls([fragment]) });
      }
      case "finish":
        this.finishReason = part.finishReason || "stop";
        if (part.usage) this.usage = withDetails(part.usage);
        if (part.responseMetadata) this.responseMetadata = { ...this.responseMetadata, ...part.responseMetadata };
        if (!wantChunk) return null;
        return this.chunk({
          content: "",
          usage_metadata: this.usage,
          response_metadata: { finish_reason: this.finishReason, ...(this.provider ?? {}) },
          chunk_position: "last",
        });
    }
  }

  private chunk(fields: Partial<AIMessageChunk>): AIMessageChunk {
    return {
      type: "AIMessageChunk",
      id: this.id,
      content: "",
      additional_kwargs: {},
      response_metadata: this.provider ? { model_provider: this.provider.model_provider } : {},
      tool_calls: [],
      invalid_tool_calls: [],
      tool_call_chunks: [],
      usage_metadata: null,
      name: null,
      ...fields,
    };
  }

  /** The complete message. */
  finish(): AIMessage {
    const toolCalls: ToolCall[] = [];
    const invalid: InvalidToolCall[] = [];
    const ordered = [...this.calls.values()].sort((a, b) => a.index - b.index);
    for (const c of ordered) {
      const id = c.id || newToolCallId();
      const raw = c.args.trim();
      if (!c.name) {
        invalid.push({ id, name: c.name ?? null, args: c.args, error: "Tool call has no name", type: "invalid_tool_call" });
        continue;
      }
      try {
        const parsed = raw === "" ? {} : JSON.parse(raw);
        if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("arguments are not a JSON object");
        toolCalls.push({ id, name: c.name, args: parsed as Record<string, unknown>, type: "tool_call" });
      } catch (err) {
        invalid.push({
          id,
          name: c.name,
          args: c.args,
          error: `Invalid JSON arguments: ${err instanceof Error ? err.message : String(err)}`,
          type: "invalid_tool_call",
        });
      }
    }
    const additional: Record<string, unknown> = {};
    if (this.reasoning) additional.reasoning_content = this.reasoning;
    return aiMessage(this.text, {
      id: this.id,
      additional_kwargs: additional,
      response_metadata: { ...this.responseMetadata, finish_reason: this.finishReason, ...(this.provider ?? {}) },
      tool_calls: toolCalls,
      invalid_tool_calls: invalid,
      usage_metadata: this.usage,
    });
  }
}

/** Consume a whole model stream into one message (no streaming). */
export async function collectModelStream(parts: AsyncIterable<ModelStreamPart>, id?: string): Promise<AIMessage> {
  const acc = new AIMessageAccumulator(id);
  for await (const p of parts) acc.push(p);
  return acc.finish();
}
