import type { AIMessage, ContentBlock, Message, MessageContent, ToolMessage } from "./types";

/** The plain text of some content: strings as-is, text blocks joined. */
export function contentText(content: MessageContent | null | undefined): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  let out = "";
  for (const block of content) {
    if (block && block.type === "text" && typeof (block as { text?: unknown }).text === "string") {
      out += (block as { text: string }).text;
    }
  }
  return out;
}

/** The plain text of a message. */
export function messageText(message: Pick<Message, "content">): string {
  return contentText(message.content);
}

/** Reasoning text of an AI message, from `reasoning_content`, reasoning/thinking blocks. */
export function reasoningText(message: Pick<AIMessage, "content" | "additional_kwargs">): string {
  const fromKwargs = message.additional_kwargs?.reasoning_content;
  let out = typeof fromKwargs === "string" ? fromKwargs : "";
  if (Array.isArray(message.content)) {
    for (const block of message.content as ContentBlock[]) {
      if (block.type === "reasoning" && typeof (block as { reasoning?: unknown }).reasoning === "string") {
        out += (block as { reasoning: string }).reasoning;
      } else if (block.type === "thinking" && typeof (block as { thinking?: unknown }).thinking === "string") {
        out += (block as { thinking: string }).thinking;
      }
    }
  }
  return out;
}

/** True when the message is an AI message. */
export function isAIMessage(m: Message | undefined | null): m is AIMessage {
  return !!m && m.type === "ai";
}

/** True when the message is a tool message. */
export function isToolMessage(m: Message | undefined | null): m is ToolMessage {
  return !!m && m.type === "tool";
}

/** True when the message is an AI message with at least one tool call. */
export function hasToolCalls(m: Message | undefined | null): m is AIMessage {
  return isAIMessage(m) && m.tool_calls.length > 0;
}

/** True for messages the UI hides (`additional_kwargs.hide_from_ui`). */
export function isHidden(m: Message): boolean {
  return m.additional_kwargs?.hide_from_ui === true;
}

/** Index of the last message of a given type, or -1. */
export function lastIndexOfType(messages: readonly Message[], type: Message["type"]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].type === type) return i;
  return -1;
}

/** The last message of a given type, or undefined. */
export function lastMessageOfType<T extends Message["type"]>(
  messages: readonly Message[],
  type: T,
): Extract<Message, { type: T }> | undefined {
  const i = lastIndexOfType(messages, type);
  return i < 0 ? undefined : (messages[i] as Extract<Message, { type: T }>);
}

/** Index of the last human message that is not hidden (a "genuine" user turn), or -1. */
export function lastGenuineHumanIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.type === "human" && !isHidden(m)) return i;
  }
  return -1;
}
