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
      const messages = request.messages;
      let systems: SystemMessage[] | null = null;
      let lastReminder = -1;
      for (const m of messages) {
        if (m.type !== "system") continue;
        systems ??= [];
        if (isDynamicContextReminder(m)) lastReminder = systems.length;
        systems.push(m);
      }
      if (!systems) return handler(request);
      // Only the latest date reminder survives; every other SystemMessage is kept, in order.
      const parts: string[] = [];
      if (request.systemPrompt) parts.push(request.systemPrompt);
      for (let i = 0; i < systems.length; i++) {
        if (i !== lastReminder && isDynamicContextReminder(systems[i])) continue;
        parts.push(flatten(systems[i].content));
      }
      return handler({
        ...request,
        systemPrompt: parts.join("\n\n"),
        messages: messages.filter((m) => m.type !== "system"),
      });
    },
  };
}
