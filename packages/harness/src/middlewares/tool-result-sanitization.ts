import { z } from "zod";
import type { ContentBlock, MessageContent, ToolMessage } from "../messages";
import type { AgentMiddleware, ToolCallResult } from "../runtime/types";
import { Command, isCommand } from "../state";
import { neutralizeWebContent } from "../text";
import { parseMiddlewareOptions } from "./zod-options";

/** Tools whose results are attacker-influenceable remote content (matched by name). */
export const REMOTE_CONTENT_TOOL_NAMES: readonly string[] = Object.freeze([
  "web_fetch",
  "web_search",
  "image_search",
  "web_capture",
]);

const optionsSchema = z
  .object({
    /** Override the remote-content tool names (defaults to DeerFlow's four). */
    tool_names: z.array(z.string().min(1)).optional(),
  });

/** Options of {@link createToolResultSanitizationMiddleware}. */
export type ToolResultSanitizationOptions = z.input<typeof optionsSchema>;

function neutralizeContent(content: MessageContent): MessageContent {
  if (typeof content === "string") return neutralizeWebContent(content);
  if (!Array.isArray(content)) return content;
  return (content as Array<ContentBlock | string>).map((b) => {
    if (typeof b === "string") return neutralizeWebContent(b);
    if (b?.type === "text" && typeof (b as { text?: unknown }).text === "string") {
      return { ...b, text: neutralizeWebContent((b as { text: string }).text) };
    }
    return b;
  }) as ContentBlock[];
}

function sanitizeMessage(m: ToolMessage): ToolMessage {
  const content = neutralizeContent(m.content);
  if (JSON.stringify(content) === JSON.stringify(m.content)) return m;
  return { ...m, content };
}

/** Neutralize a tool result (a ToolMessage, or the ToolMessages inside a Command update). */
export function sanitizeToolResult(result: ToolCallResult): ToolCallResult {
  if (isCommand(result)) {
    const messages = result.update.messages;
    if (!Array.isArray(messages)) return result;
    let changed = false;
    const next = messages.map((m) => {
      if (m && typeof m === "object" && (m as { type?: unknown }).type === "tool") {
        const s = sanitizeMessage(m as ToolMessage);
        if (s !== m) changed = true;
        return s;
      }
      return m;
    });
    if (!changed) return result;
    return new Command({ update: { ...result.update, messages: next }, goto: result.goto, resume: result.resume });
  }
  return sanitizeMessage(result);
}

/**
 * DeerFlow's ToolResultSanitizationMiddleware: results of the remote-content
 * tools (`web_fetch`, `web_search`, `image_search`, `web_capture`) get their
 * framework/injection tags escaped and boundary markers neutralized before the
 * model sees them. Every other tool's output passes through untouched.
 */
export function createToolResultSanitizationMiddleware(options: ToolResultSanitizationOptions = {}): AgentMiddleware {
  const opts = parseMiddlewareOptions("ToolResultSanitizationMiddleware", optionsSchema, options);
  const names = new Set(opts.tool_names ?? REMOTE_CONTENT_TOOL_NAMES);
  return {
    name: "ToolResultSanitizationMiddleware",
    async wrapToolCall(request, handler) {
      const result = await handler(request);
      if (!names.has(request.toolCall.name)) return result;
      return sanitizeToolResult(result);
    },
  };
}
