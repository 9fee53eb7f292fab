import type { AIMessage, Message } from "../messages";
import { humanMessage, removeMessage } from "../messages";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState } from "../state";

/** Recovery prompt appended (request only) to the retry after an empty post-tool answer. */
export const TERMINAL_RECOVERY_PROMPT =
  "<system_reminder>\n" +
  "Your previous response after the tool execution was empty. Review the tool results " +
  "already present in the conversation and provide a concise, user-visible final response. " +
  "Do not call another tool unless it is strictly necessary.\n" +
  "</system_reminder>";

/** Text that replaces a second empty answer. */
export const TERMINAL_FALLBACK_CONTENT =
  "The model completed the tool run but returned no final response, including after one automatic retry. Please try again or use a different model.";

/** `error_reason` written on the fallback message and in the run outcome's error. */
export const TERMINAL_FALLBACK_REASON = "Model returned an empty terminal response after one retry";

function hasVisibleContent(m: AIMessage): boolean {
  if (typeof m.content === "string") return m.content.trim().length > 0;
  if (!Array.isArray(m.content)) return false;
  return m.content.some((b) => {
    if (typeof b === "string") return (b as string).trim().length > 0;
    return (b.type === "text" || b.type === "output_text") && typeof (b as { text?: unknown }).text === "string" && ((b as { text: string }).text.trim().length > 0);
  });
}

function hasToolIntentOrError(m: AIMessage): boolean {
  if (m.tool_calls.length || m.invalid_tool_calls?.length) return true;
  const kw = m.additional_kwargs ?? {};
  if (kw.tool_calls || kw.function_call) return true;
  const fr = m.response_metadata?.finish_reason;
  return fr === "tool_calls" || fr === "function_call";
}

function toolResultInCurrentTurn(messages: readonly Message[]): boolean {
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.type === "human" && !m.additional_kwargs?.hide_from_ui) lastUser = i;
  });
  if (lastUser < 0) return false;
  return messages.slice(lastUser + 1).some((m) => m.type === "tool");
}

/**
 * DeerFlow's `TerminalResponseMiddleware`: an empty final AI message after a
 * tool ran in the current turn is removed and the model is called once more
 * with {@link TERMINAL_RECOVERY_PROMPT} appended (hidden human message named
 * `terminal_response_recovery`, request only). A second empty answer in the
 * same run is replaced by {@link TERMINAL_FALLBACK_CONTENT} with
 * `additional_kwargs.deerflow_error_fallback = true`, and
 * the outcome error `{type:"empty_terminal_response", reason}` is set so the
 * runner reports the run as `error`.
 */
export function createTerminalResponseMiddleware(): AgentMiddleware {
  const retried = new Set<string>();
  const pending = new Set<string>();
  const key = (rt: Runtime) => `${rt.threadId}\u0000${rt.runId}`;
  const clearThread = (rt: Runtime) => {
    const prefix = `${rt.threadId}\u0000`;
    for (const set of [retried, pending]) for (const k of [...set]) if (k.startsWith(prefix)) set.delete(k);
  };
  const bound = (set: Set<string>) => {
    while (set.size > 1000) set.delete(set.values().next().value as string);
  };

  return {
    name: "TerminalResponseMiddleware",
    beforeAgent(_state, runtime) {
      clearThread(runtime);
    },
    afterModel(state: AgentState, runtime): HookResult {
      const messages = state.messages;
      const last = messages[messages.length - 1];
      if (!last || last.type !== "ai") return;
      if (hasVisibleContent(last) || hasToolIntentOrError(last)) return;
      if (!toolResultInCurrentTurn(messages)) return;
      const k = key(runtime);
      if (!retried.has(k)) {
        retried.add(k);
        pending.add(k);
        bound(retried);
        bound(pending);
        return { messages: last.id ? [removeMessage(last.id)] : [], jumpTo: "model" };
      }
      runtime.outcome.setError({ type: "empty_terminal_response", reason: TERMINAL_FALLBACK_REASON });
      const fallback: AIMessage = {
        ...last,
        content: TERMINAL_FALLBACK_CONTENT,
        additional_kwargs: { ...last.additional_kwargs, deerflow_error_fallback: true, error_reason: TERMINAL_FALLBACK_REASON },
      };
      return { messages: [fallback] };
    },
    afterAgent(_state, runtime) {
      retried.delete(key(runtime));
      pending.delete(key(runtime));
    },
    async wrapModelCall(request, handler) {
      const k = key(request.runtime);
      if (!pending.has(k)) return handler(request);
      pending.delete(k);
      const reminder = humanMessage(TERMINAL_RECOVERY_PROMPT, {
        name: "terminal_response_recovery",
        additional_kwargs: { hide_from_ui: true },
      });
      return handler({ ...request, messages: [...request.messages, reminder] });
    },
  };
}
