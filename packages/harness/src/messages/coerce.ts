import { ValidationError } from "../errors";
import { aiMessage, humanMessage, systemMessage, toolMessage } from "./builders";
import type { Message, MessageContent, RemoveMessage, ToolCall } from "./types";

const ROLE_TO_TYPE: Record<string, Message["type"]> = {
  human: "human",
  user: "human",
  ai: "ai",
  assistant: "ai",
  AIMessageChunk: "ai",
  system: "system",
  developer: "system",
  tool: "tool",
};

function isContent(v: unknown): v is MessageContent {
  return typeof v === "string" || (Array.isArray(v) && v.every((b) => b && typeof b === "object" && typeof (b as { type?: unknown }).type === "string"));
}

/**
 * Turn a wire dict (`{type|role, content, ...}`) into a typed message.
 * Throws a {@link ValidationError} naming `where` (e.g. `input.messages[0]`).
 */
export function coerceMessage(raw: unknown, where = "message"): Message | RemoveMessage {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ValidationError(`Invalid message at ${where}: expected an object`);
  }
  const d = raw as Record<string, unknown>;
  const kind = (d.type ?? d.role) as string | undefined;
  if (kind === "remove") {
    if (typeof d.id !== "string" || !d.id) throw new ValidationError(`Invalid message at ${where}: remove needs an id`);
    return { type: "remove", id: d.id };
  }
  const type = kind ? ROLE_TO_TYPE[kind] : undefined;
  if (!type) {
    throw new ValidationError(
      `Invalid message at ${where}: unknown type ${JSON.stringify(kind)} (expected human, ai, system or tool)`,
    );
  }
  const content = d.content ?? "";
  if (!isContent(content)) {
    throw new ValidationError(`Invalid message at ${where}: content must be a string or a list of content blocks`);
  }
  const common = {
    id: typeof d.id === "string" && d.id ? d.id : undefined,
    name: typeof d.name === "string" ? d.name : undefined,
    additional_kwargs: isRecord(d.additional_kwargs) ? { ...d.additional_kwargs } : {},
    response_metadata: isRecord(d.response_metadata) ? { ...d.response_metadata } : {},
  };
  switch (type) {
    case "human":
      return humanMessage(content, common);
    case "system":
      return systemMessage(content, common);
    case "tool": {
      if (typeof d.tool_call_id !== "string" || !d.tool_call_id) {
        throw new ValidationError(`Invalid message at ${where}: tool messages need a tool_call_id`);
      }
      return toolMessage(content, {
        ...common,
        tool_call_id: d.tool_call_id,
        status: d.status === "error" ? "error" : "success",
        artifact: d.artifact,
      });
    }
    case "ai": {
      const calls = Array.isArray(d.tool_calls) ? d.tool_calls : [];
      const toolCalls: ToolCall[] = calls.map((c, i) => {
        if (!isRecord(c) || typeof c.name !== "string") {
          throw new ValidationError(`Invalid message at ${where}: tool_calls[${i}] needs a name`);
        }
        return {
          id: typeof c.id === "string" ? c.id : `call_${i}`,
          name: c.name,
          args: isRecord(c.args) ? c.args : {},
          type: "tool_call",
        };
      });
      return aiMessage(content, {
        ...common,
        tool_calls: toolCalls,
        invalid_tool_calls: Array.isArray(d.invalid_tool_calls) ? (d.invalid_tool_calls as never[]) : [],
        usage_metadata: isRecord(d.usage_metadata) ? (d.usage_metadata as never) : undefined,
      });
    }
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}
