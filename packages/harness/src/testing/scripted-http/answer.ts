import type { HttpScriptedResponse } from "./script";

/** A scripted response made concrete: ids assigned, args serialised, usage filled in. */
export interface ConcreteAnswer {
  text: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; argsText: string }>;
  inputTokens: number;
  outputTokens: number;
  /** OpenAI-style finish reason. */
  finishReason: string;
  chunkDelayMs: number;
}

/** Split text into word-sized stream chunks. */
export function chunksOf(text: string): string[] {
  if (!text) return [];
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

/** Make a scripted response concrete for one request. */
export function concreteAnswer(resp: HttpScriptedResponse, body: Record<string, unknown> | null, callIndex: number, idPrefix: string): ConcreteAnswer {
  const toolCalls = (resp.toolCalls ?? []).map((c, i) => ({
    id: c.id ?? `${idPrefix}${callIndex}_${i}`,
    name: c.name,
    argsText: typeof c.args === "string" ? c.args : JSON.stringify(c.args ?? {}),
  }));
  const inputChars = JSON.stringify(body?.messages ?? "").length + JSON.stringify(body?.system ?? "").length;
  const outChars = (resp.text ?? "").length + (resp.reasoning ?? "").length + toolCalls.reduce((n, c) => n + c.argsText.length, 0);
  return {
    text: resp.text ?? "",
    reasoning: resp.reasoning ?? "",
    toolCalls,
    inputTokens: resp.usage?.input_tokens ?? Math.max(1, Math.ceil(inputChars / 4)),
    outputTokens: resp.usage?.output_tokens ?? Math.max(1, Math.ceil(outChars / 4)),
    finishReason: resp.finishReason ?? (toolCalls.length ? "tool_calls" : "stop"),
    chunkDelayMs: resp.chunkDelayMs ?? 0,
  };
}
