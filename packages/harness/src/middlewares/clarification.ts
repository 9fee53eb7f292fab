import { toolMessage } from "../messages";
import type { ToolCallRequest } from "../runtime/types";
import type { AgentMiddleware } from "../runtime/types";
import { Command } from "../state";
import { buildHumanInputRequest, clarificationRequestId, formatClarification, normalizeFields } from "./clarification-payload";

/** Tool result when `context.disable_clarification` is set (the run continues). */
export const CLARIFICATION_DISABLED_TEXT =
  "Clarification is disabled in this context — the human is not present to answer synchronously. Do not ask for confirmation. Proceed with your best judgment, carry out the requested action, and state any assumptions you made in your final response.";

function argsOf(request: ToolCallRequest): Record<string, unknown> {
  const raw = request.toolCall.args as unknown;
  if (raw && typeof raw === "object" && !Array.isArray(raw)) return raw as Record<string, unknown>;
  if (typeof raw === "string") {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // fall through
    }
  }
  return {};
}

/**
 * DeerFlow's `ClarificationMiddleware` (must be LAST in the chain): intercepts
 * `ask_clarification` before execution and ends the run with
 * `Command({goto:"end"})` whose ToolMessage (`id = clarification:{tool_call_id}`,
 * name `ask_clarification`) carries the formatted question as content and the
 * `human_input` request as artifact. With the run setting `disable_clarification` it
 * returns a "proceed with best judgment" ToolMessage and the run continues.
 */
export function createClarificationMiddleware(): AgentMiddleware {
  return {
    name: "ClarificationMiddleware",
    async wrapToolCall(request, handler) {
      if (request.toolCall.name !== "ask_clarification") return handler(request);
      const toolCallId = request.toolCall.id ?? "";
      if (request.runtime.context.settings.disableClarification) {
        return toolMessage(CLARIFICATION_DISABLED_TEXT, {
          id: clarificationRequestId(toolCallId, "proceed-without-clarification"),
          tool_call_id: toolCallId,
          name: "ask_clarification",
        });
      }
      const args = argsOf(request);
      const fields = normalizeFields(args.fields);
      const text = formatClarification(args, fields);
      const requestId = clarificationRequestId(toolCallId, text);
      const human_input = buildHumanInputRequest(args, { toolCallId, requestId }, fields);
      const msg = toolMessage(text, {
        id: requestId,
        tool_call_id: toolCallId,
        name: "ask_clarification",
        artifact: { human_input },
      });
      return new Command({ goto: "end", update: { messages: [msg] } });
    },
  };
}
