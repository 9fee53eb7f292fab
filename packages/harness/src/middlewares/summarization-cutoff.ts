import { contentText } from "../messages";
import type { Message } from "../messages";

/** Counts the tokens of some messages. */
export type TokenCounter = (messages: readonly Message[]) => number;

/** LangChain's approximate counter: ~4 chars per token plus 3 per message (tool calls included). */
export const approximateTokenCounter: TokenCounter = (messages) => {
  let chars = 0;
  let n = 0;
  for (const m of messages) {
    n++;
    chars += contentText(m.content).length + m.type.length;
    if (typeof m.content !== "string") {
      for (const b of m.content) if (b.type !== "text") chars += JSON.stringify(b).length;
    }
    if (m.type === "ai" && m.tool_calls.length) chars += JSON.stringify(m.tool_calls).length;
    if (m.name) chars += m.name.length;
  }
  return Math.ceil(chars / 4 + n * 3);
};

/**
 * Move a cutoff so it never separates an AI message's tool calls from their
 * results: when the message at the cutoff is a ToolMessage, the cutoff moves
 * back to the AI message that requested it (or, with no such message, past
 * the run of ToolMessages).
 */
export function findSafeCutoff(messages: readonly Message[], cutoff: number): number {
  if (cutoff >= messages.length || messages[cutoff].type !== "tool") return cutoff;
  const ids = new Set<string>();
  let idx = cutoff;
  while (idx < messages.length && messages[idx].type === "tool") {
    ids.add((messages[idx] as { tool_call_id: string }).tool_call_id);
    idx++;
  }
  for (let i = cutoff - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.type === "ai" && m.tool_calls.some((c) => ids.has(c.id))) return i;
  }
  return idx;
}

/** Keep the last `n` messages. */
export function cutoffForMessages(messages: readonly Message[], n: number): number {
  if (messages.length <= n) return 0;
  return findSafeCutoff(messages, messages.length - n);
}

/** Keep as many trailing messages as fit in `maxTokens` (at least the last one). */
export function cutoffForTokens(messages: readonly Message[], maxTokens: number, count: TokenCounter): number {
  if (!messages.length) return 0;
  if (count(messages) <= maxTokens) return 0;
  let lo = 0;
  let hi = messages.length;
  let best = messages.length;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (count(messages.slice(mid)) <= maxTokens) {
      best = mid;
      hi = mid;
    } else lo = mid + 1;
  }
  if (best >= messages.length) best = messages.length - 1;
  return findSafeCutoff(messages, best);
}

/** `Human: …` / `AI: …` / `Tool: …` / `System: …` lines (LangChain's `get_buffer_string`). */
export function bufferString(messages: readonly Message[]): string {
  const role = { human: "Human", ai: "AI", tool: "Tool", system: "System" } as const;
  return messages
    .map((m) => {
      let line = `${role[m.type]}: ${contentText(m.content)}`;
      if (m.type === "ai" && m.tool_calls.length) line += JSON.stringify(m.tool_calls.map((c) => ({ name: c.name, args: c.args, id: c.id })));
      return line;
    })
    .join("\n");
}
