import { chunksOf } from "./answer";
import type { ConcreteAnswer } from "./answer";
import type { SseWriter } from "./openai-wire";
import type { HttpFaultKind } from "./script";

const STOP: Record<string, string> = { stop: "end_turn", tool_calls: "tool_use", length: "max_tokens", content_filter: "refusal" };

/** Anthropic's stop_reason for an OpenAI-style finish reason. */
export function anthropicStopReason(finish: string): string {
  return STOP[finish] ?? finish;
}

/** The signature the scripted server puts on thinking blocks. */
export const SCRIPTED_THINKING_SIGNATURE = "scripted-signature";

/** Stream an answer as Anthropic Messages SSE events. */
export async function writeAnthropicStream(write: SseWriter, a: ConcreteAnswer, model: string, id: string): Promise<void> {
  const ev = (type: string, data: Record<string, unknown>) => write(JSON.stringify({ type, ...data }), type);
  await ev("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: a.inputTokens, output_tokens: 1 },
    },
  });
  let index = 0;
  if (a.reasoning) {
    await ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    for (const t of chunksOf(a.reasoning)) await ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: t } });
    await ev("content_block_delta", { index, delta: { type: "signature_delta", signature: SCRIPTED_THINKING_SIGNATURE } });
    await ev("content_block_stop", { index });
    index++;
  }
  if (a.text) {
    await ev("content_block_start", { index, content_block: { type: "text", text: "" } });
    for (const t of chunksOf(a.text)) await ev("content_block_delta", { index, delta: { type: "text_delta", text: t } });
    await ev("content_block_stop", { index });
    index++;
  }
  for (const c of a.toolCalls) {
    await ev("content_block_start", { index, content_block: { type: "tool_use", id: c.id, name: c.name, input: {} } });
    const mid = Math.ceil(c.argsText.length / 2);
    for (const part of [c.argsText.slice(0, mid), c.argsText.slice(mid)]) {
      if (part) await ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } });
    }
    await ev("content_block_stop", { index });
    index++;
  }
  await ev("message_delta", { delta: { stop_reason: anthropicStopReason(a.finishReason), stop_sequence: null }, usage: { output_tokens: a.outputTokens } });
  await ev("message_stop", {});
}

/** A non-streaming Anthropic message. */
export function anthropicMessage(a: ConcreteAnswer, model: string, id: string): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (a.reasoning) content.push({ type: "thinking", thinking: a.reasoning, signature: SCRIPTED_THINKING_SIGNATURE });
  if (a.text) content.push({ type: "text", text: a.text });
  for (const c of a.toolCalls) {
    let input: unknown = {};
    try {
      input = JSON.parse(c.argsText);
    } catch {
      input = {};
    }
    content.push({ type: "tool_use", id: c.id, name: c.name, input });
  }
  return {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: anthropicStopReason(a.finishReason),
    stop_sequence: null,
    usage: { input_tokens: a.inputTokens, output_tokens: a.outputTokens },
  };
}

/** Status and body of an injected Anthropic-style error. */
export function anthropicErrorFor(kind: HttpFaultKind, message?: string): { status: number; body: Record<string, unknown> } {
  const err = (status: number, type: string, text: string) => ({ status, body: { type: "error", error: { type, message: message ?? text } } });
  switch (kind) {
    case "rate_limit":
      return err(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit.");
    case "insufficient_quota":
      return err(400, "billing_error", "Your credit balance is too low to access the Anthropic API.");
    case "unauthorized":
      return err(401, "authentication_error", "invalid x-api-key");
    case "context_length":
      return err(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum");
    case "bad_request":
      return err(400, "invalid_request_error", "Invalid request.");
    case "overloaded":
      return err(529, "overloaded_error", "Overloaded");
    default:
      return err(500, "api_error", "Internal server error");
  }
}
