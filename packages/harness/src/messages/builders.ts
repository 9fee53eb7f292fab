import { newAIMessageId, newMessageId } from "./ids";
import type {
  AIMessage,
  HumanMessage,
  InvalidToolCall,
  MessageContent,
  RemoveMessage,
  SystemMessage,
  ToolCall,
  ToolMessage,
  UsageMetadata,
} from "./types";
import { REMOVE_ALL_MESSAGES } from "./types";

interface CommonFields {
  id?: string;
  name?: string | null;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
}

/** Build a human message. An id is generated when none is given. */
export function humanMessage(content: MessageContent, fields: CommonFields = {}): HumanMessage {
  return {
    type: "human",
    id: fields.id ?? newMessageId(),
    content,
    name: fields.name ?? null,
    additional_kwargs: fields.additional_kwargs ?? {},
    response_metadata: fields.response_metadata ?? {},
  };
}

/** Build a system message. */
export function systemMessage(content: MessageContent, fields: CommonFields = {}): SystemMessage {
  return {
    type: "system",
    id: fields.id ?? newMessageId(),
    content,
    name: fields.name ?? null,
    additional_kwargs: fields.additional_kwargs ?? {},
    response_metadata: fields.response_metadata ?? {},
  };
}

/** Build an AI message. */
export function aiMessage(
  content: MessageContent,
  fields: CommonFields & {
    tool_calls?: ToolCall[];
    invalid_tool_calls?: InvalidToolCall[];
    usage_metadata?: UsageMetadata | null;
  } = {},
): AIMessage {
  return {
    type: "ai",
    id: fields.id ?? newAIMessageId(),
    content,
    name: fields.name ?? null,
    additional_kwargs: fields.additional_kwargs ?? {},
    response_metadata: fields.response_metadata ?? {},
    tool_calls: (fields.tool_calls ?? []).map((c) => ({ ...c, type: "tool_call" as const })),
    invalid_tool_calls: fields.invalid_tool_calls ?? [],
    ...(fields.usage_metadata !== undefined ? { usage_metadata: fields.usage_metadata } : {}),
  };
}

/** Build a tool result message. */
export function toolMessage(
  content: MessageContent,
  fields: CommonFields & { tool_call_id: string; status?: "success" | "error"; artifact?: unknown },
): ToolMessage {
  const msg: ToolMessage = {
    type: "tool",
    id: fields.id ?? newMessageId(),
    content,
    name: fields.name ?? null,
    additional_kwargs: fields.additional_kwargs ?? {},
    response_metadata: fields.response_metadata ?? {},
    tool_call_id: fields.tool_call_id,
    status: fields.status ?? "success",
  };
  // LangChain serialises a tool message's artifact as null when there is none
  msg.artifact = fields.artifact === undefined ? null : fields.artifact;
  return msg;
}

/** A marker removing the message with `id` from state. */
export function removeMessage(id: string): RemoveMessage {
  return { type: "remove", id };
}

/** A marker clearing every message from state. */
export function removeAllMessages(): RemoveMessage {
  return { type: "remove", id: REMOVE_ALL_MESSAGES };
}
