import type { ServerResponse } from "node:http";
import { chunksOf } from "./answer";
import type { ConcreteAnswer } from "./answer";
import type { HttpFaultKind } from "./script";

/** Writes one SSE `data:` line. */
export type SseWriter = (data: string, event?: string) => Promise<void>;

/** Stream an answer as OpenAI chat-completion chunks. */
export async function writeOpenAIStream(write: SseWriter, a: ConcreteAnswer, model: string, id: string, includeUsage: boolean): Promise<void> {
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  await write(chunk({ role: "assistant", content: "" }));
  for (const t of chunksOf(a.reasoning)) await write(chunk({ reasoning_content: t }));
  for (const t of chunksOf(a.text)) await write(chunk({ content: t }));
  for (let i = 0; i < a.toolCalls.length; i++) {
    const c = a.toolCalls[i];
    await write(chunk({ tool_calls: [{ index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    const mid = Math.ceil(c.argsText.length / 2);
    for (const part of [c.argsText.slice(0, mid), c.argsText.slice(mid)]) {
      if (part) await write(chunk({ tool_calls: [{ index: i, function: { arguments: part } }] }));
    }
  }
  await write(chunk({}, a.finishReason));
  if (includeUsage) {
    await write(
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [],
        usage: openAIUsage(a),
      }),
    );
  }
  await write("[DONE]");
}

function openAIUsage(a: ConcreteAnswer) {
  return {
    prompt_tokens: a.inputTokens,
    completion_tokens: a.outputTokens,
    total_tokens: a.inputTokens + a.outputTokens,
    ...(a.reasoning ? { completion_tokens_details: { reasoning_tokens: Math.max(1, Math.ceil(a.reasoning.length / 4)) } } : {}),
  };
}

/** A non-streaming OpenAI chat completion. */
export function openAICompletion(a: ConcreteAnswer, model: string, id: string): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: a.text || (a.toolCalls.length ? null : "") };
  if (a.reasoning) message.reasoning_content = a.reasoning;
  if (a.toolCalls.length) {
    message.tool_calls = a.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.argsText } }));
  }
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: a.finishReason }],
    usage: openAIUsage(a),
  };
}

/** Status and body of an injected OpenAI-style error. */
export function openAIErrorFor(kind: HttpFaultKind, message?: string): { status: number; body: Record<string, unknown> } {
  const err = (status: number, type: string, code: string | null, text: string) => ({
    status,
    body: { error: { message: message ?? text, type, param: null, code } },
  });
  switch (kind) {
    case "rate_limit":
      return err(429, "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later.");
    case "insufficient_quota":
      return err(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.");
    case "unauthorized":
      return err(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided.");
    case "context_length":
      return err(400, "invalid_request_error", "context_length_exceeded", "This model's maximum context length is 8192 tokens.");
    case "bad_request":
      return err(400, "invalid_request_error", null, "Invalid request.");
    case "overloaded":
      return err(503, "server_error", "overloaded", "The engine is currently overloaded, please try again later.");
    default:
      return err(500, "server_error", null, "The server had an error while processing your request.");
  }
}

/** Send a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}
