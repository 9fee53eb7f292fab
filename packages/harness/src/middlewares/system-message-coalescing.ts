import type { MessageContent, SystemMessage } from "../messages";
import type { AgentMiddleware } from "../runtime/types";
import { isDynamicContextReminder } from "./dynamic-context";

function flatten(content: MessageContent): string {
  if (typeof content === "string") return content;
  return content
    .map((b) => (typeof b === "string" ? b : typeof (b as { text?: unknown }).text === "string" ? (b as { text: string }).text : JSON.stringify(b)))
    .join("\n");
}

/**
 * DeerFlow's `SystemMessageCoalescingMiddleware` (wrap_model_call): strict
 * backends reject non-leading or multiple system messages, so the static
 * system prompt and every SystemMessage in the request are merged (joined by
 * a blank line) into the single leading system prompt; when several
 * dynamic-context date reminders exist (midnight crossing) only the latest
 * survives. Only the request is changed; with no in-message SystemMessage the
 * request passes through untouched (prefix-cache friendly).
 */
export function createSystemMessageCoalescingMiddleware(): AgentMiddleware {
  return {
    name: "SystemMessageCoalescingMiddleware",
    async wrapModelCall(request, handler) {
      const systems = request.messages.filter((m): m is SystemMessage => m.type === "system");
      if (!systems.length) return handler(request);
      const reminderIdx: number[] = [];
      systems.forEach((m, i) => {
        if (isDynamicContextReminder(m)) reminderIdx.push(i);
      });
      const dropped = new Set(reminderIdx.slice(0, -1));
      const parts: string[] = [];
      if (request.systemPrompt) parts.push(request.systemPrompt);
      systems.forEach((m, i) => {
        if (!dropped.has(i)) parts.push(flatten(m.content));
      });
      return handler({
        ...request,
        systemPrompt: parts.join("\n\n"),
        messages: request.messages.filter((m) => m.type !== "system"),
      });
    },
  };
}
