import { lastIndexOfType } from "../messages";
import type { AIMessage, Message, ToolCall } from "../messages";

/** Where the loop goes next: the model, the tools, or the end of the run. */
export type Phase = "model" | "tools" | "end";

/**
 * Checkpoint metadata key holding the node the loop runs after that
 * checkpoint (`["model"]`, `["tools"]`; absent at the end). Snapshots expose
 * it as `next` (and drop it from `metadata`), so the head of a run that was
 * cancelled mid-loop says where it would resume, as LangGraph's does.
 */
export const NEXT_NODES_KEY = "__next";

/** Tool calls of the last AI message that have no result yet. */
export function pendingToolCalls(messages: readonly Message[]): { ai: AIMessage; calls: ToolCall[]; invalid: { id: string; name: string; error: string }[] } | undefined {
  const aiIndex = lastIndexOfType(messages, "ai");
  if (aiIndex < 0) return undefined;
  const ai = messages[aiIndex] as AIMessage;
  const answered = new Set<string>();
  for (let i = aiIndex + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.type === "tool") answered.add(m.tool_call_id);
  }
  const calls = ai.tool_calls.filter((c) => !answered.has(c.id));
  const invalid = (ai.invalid_tool_calls ?? [])
    .filter((c) => c.id && !answered.has(c.id))
    .map((c) => ({ id: c.id as string, name: c.name ?? "", error: c.error ?? "invalid arguments" }));
  if (!calls.length && !invalid.length) return undefined;
  return { ai, calls, invalid };
}
