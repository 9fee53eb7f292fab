import type { AIMessage, MessageContent } from "../messages";

/** Append text to AI content (string or blocks), separated by a blank line. */
export function appendToContent(content: MessageContent | null | undefined, text: string): MessageContent {
  if (content == null) return text;
  if (Array.isArray(content)) return [...content, { type: "text", text: `\n\n${text}` }];
  return content ? `${content}\n\n${text}` : text;
}

/**
 * A copy of `msg` (same id) without tool calls — also without raw
 * `additional_kwargs.tool_calls` / `function_call` — whose `finish_reason`
 * `tool_calls` becomes `stop`, with `text` appended to the content.
 * Used by the forced-stop paths (LoopDetection, TokenBudget, SafetyFinishReason).
 */
export function stripToolCalls(msg: AIMessage, text?: string): AIMessage {
  const additional_kwargs = { ...msg.additional_kwargs };
  delete additional_kwargs.tool_calls;
  delete additional_kwargs.function_call;
  const response_metadata = structuredClone(msg.response_metadata ?? {});
  if (response_metadata.finish_reason === "tool_calls") response_metadata.finish_reason = "stop";
  return {
    ...msg,
    content: text ? appendToContent(msg.content, text) : msg.content,
    tool_calls: [],
    invalid_tool_calls: [],
    additional_kwargs,
    response_metadata,
  };
}
