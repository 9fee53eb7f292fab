import { humanMessage, toolMessage } from "../messages";
import type { AIMessage, Message } from "../messages";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import type { AgentState, Todo } from "../state";
import { createWriteTodosTool, TODO_SYSTEM_PROMPT, WRITE_TODOS_TOOL_DESCRIPTION } from "../builtins/write-todos";

/** Max premature-exit reminders per run. */
export const MAX_TODO_COMPLETION_REMINDERS = 2;

/** Error for each of several `write_todos` calls made in one response. */
export const PARALLEL_WRITE_TODOS_ERROR =
  "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it only once per model invocation to update the todo list.";

/** `- [status] content` lines. */
export function formatTodos(todos: readonly Todo[]): string {
  return todos.map((t) => `- [${t.status ?? "pending"}] ${t.content ?? ""}`).join("\n");
}

/** Context-loss reminder text (written to state as a hidden `todo_reminder` human message). */
export function todoReminderText(todos: readonly Todo[]): string {
  return (
    "<system_reminder>\n" +
    "Your todo list from earlier is no longer visible in the current context window, but it is still active. Here is the current state:\n\n" +
    `${formatTodos(todos)}\n\n` +
    "Continue tracking and updating this todo list as you work. Call `write_todos` whenever the status of any item changes.\n" +
    "</system_reminder>"
  );
}

/** Premature-exit reminder text (injected into the next request only). */
export function todoCompletionReminderText(todos: readonly Todo[]): string {
  const incomplete = todos.filter((t) => t.status !== "completed");
  return (
    "<system_reminder>\n" +
    "You have incomplete todo items that must be finished before giving your final response:\n\n" +
    `${formatTodos(incomplete)}\n\n` +
    "Please continue working on these tasks. Call `write_todos` to mark items as completed as you finish them, and only respond when all items are done.\n" +
    "</system_reminder>"
  );
}

function hasToolIntentOrError(m: AIMessage): boolean {
  if (m.tool_calls.length || m.invalid_tool_calls?.length) return true;
  if (m.additional_kwargs?.tool_calls || m.additional_kwargs?.function_call) return true;
  const fr = m.response_metadata?.finish_reason;
  return fr === "tool_calls" || fr === "function_call";
}

/** Options of {@link createTodoMiddleware}. */
export interface TodoOptions {
  /** Appended to the system prompt on every model call (default: DeerFlow's `<todo_list_system>`). */
  systemPrompt?: string;
  /** Description of the contributed `write_todos` tool. */
  toolDescription?: string;
}

/**
 * DeerFlow's `TodoMiddleware` (plan mode only): contributes `write_todos`,
 * appends the todo system prompt to each request, rejects parallel
 * `write_todos` calls, re-injects the list as a hidden `todo_reminder` human
 * message when the `write_todos` call left the context (e.g. summarized
 * away), and — when the model gives a final answer while todos are
 * incomplete — jumps back to the model with a `todo_completion_reminder`
 * (request only), at most {@link MAX_TODO_COMPLETION_REMINDERS} per run.
 */
export function createTodoMiddleware(options: TodoOptions = {}): AgentMiddleware {
  const systemPrompt = options.systemPrompt ?? TODO_SYSTEM_PROMPT;
  const writeTodos = createWriteTodosTool(options.toolDescription ?? WRITE_TODOS_TOOL_DESCRIPTION);
  const pending = new Map<string, string[]>();
  const counts = new Map<string, number>();
  const key = (rt: Runtime) => `${rt.threadId}\u0000${rt.runId}`;
  const todosOf = (state: AgentState): Todo[] => (Array.isArray(state.todos) ? (state.todos as Todo[]) : []);

  return {
    name: "TodoMiddleware",
    tools: [writeTodos],
    beforeAgent(_state, runtime) {
      const prefix = `${runtime.threadId}\u0000`;
      const mine = key(runtime);
      for (const map of [pending, counts]) for (const k of [...map.keys()]) if (k.startsWith(prefix) && k !== mine) map.delete(k);
    },
    beforeModel(state: AgentState): HookResult {
      const todos = todosOf(state);
      if (!todos.length) return;
      const msgs: Message[] = state.messages;
      if (msgs.some((m) => m.type === "ai" && m.tool_calls.some((c) => c.name === "write_todos"))) return;
      if (msgs.some((m) => m.type === "human" && m.name === "todo_reminder")) return;
      return {
        messages: [humanMessage(todoReminderText(todos), { name: "todo_reminder", additional_kwargs: { hide_from_ui: true } })],
      };
    },
    afterModel(state: AgentState, runtime): HookResult {
      const msgs = state.messages;
      const last = msgs[msgs.length - 1];
      if (last?.type === "ai") {
        const calls = last.tool_calls.filter((c) => c.name === "write_todos");
        if (calls.length > 1) {
          return { messages: calls.map((c) => toolMessage(PARALLEL_WRITE_TODOS_ERROR, { tool_call_id: c.id, name: "write_todos", status: "error" })) };
        }
      }
      let lastAI: AIMessage | undefined;
      for (let i = msgs.length - 1; i >= 0; i--) {
        const m = msgs[i];
        if (m.type === "ai") {
          lastAI = m;
          break;
        }
      }
      if (!lastAI || hasToolIntentOrError(lastAI)) return;
      const todos = todosOf(state);
      if (!todos.length || todos.every((t) => t.status === "completed")) return;
      const k = key(runtime);
      if ((counts.get(k) ?? 0) >= MAX_TODO_COMPLETION_REMINDERS) return;
      counts.set(k, (counts.get(k) ?? 0) + 1);
      pending.set(k, [...(pending.get(k) ?? []), todoCompletionReminderText(todos)]);
      while (counts.size > 4096) {
        const oldest = counts.keys().next().value as string;
        counts.delete(oldest);
        pending.delete(oldest);
      }
      return { jumpTo: "model" };
    },
    afterAgent(_state, runtime) {
      pending.delete(key(runtime));
      counts.delete(key(runtime));
    },
    async wrapModelCall(request, handler) {
      const req = { ...request, systemPrompt: request.systemPrompt ? `${request.systemPrompt}\n\n${systemPrompt}` : systemPrompt };
      const k = key(request.runtime);
      const reminders = pending.get(k);
      if (!reminders?.length) return handler(req);
      pending.delete(k);
      const reminder = humanMessage([...new Set(reminders)].join("\n\n"), {
        name: "todo_completion_reminder",
        additional_kwargs: { hide_from_ui: true },
      });
      return handler({ ...req, messages: [...request.messages, reminder] });
    },
  };
}
