import { z } from "zod";
import { toolMessage } from "../messages";
import { Command } from "../state";
import type { Todo } from "../state";
import { tool } from "../tools";
import type { ToolDefinition } from "../tools";

/** Name of the plan-mode todo tool. */
export const WRITE_TODOS_TOOL_NAME = "write_todos";

/** Arguments of `write_todos`. */
export const writeTodosSchema = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().describe("The content/description of the todo item."),
        status: z.enum(["pending", "in_progress", "completed"]).describe("The current status of the todo item."),
      }),
    )
    .describe("List of todo items to update."),
});

function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "string") return `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`;
  if (typeof v === "boolean") return v ? "True" : "False";
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (typeof v === "object") return `{${Object.entries(v as object).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(", ")}}`;
  return String(v);
}

/** The tool result text: `Updated todo list to [{'content': …, 'status': …}]` (LangChain's wording). */
export function writeTodosResultText(todos: Todo[]): string {
  return `Updated todo list to ${pyRepr(todos.map((t) => ({ content: t.content, status: t.status })))}`;
}

/**
 * `write_todos(todos)`: replaces `state.todos` and answers with a ToolMessage,
 * as one `Command` update. Contributed by TodoMiddleware in plan mode.
 */
export function createWriteTodosTool(description: string = WRITE_TODOS_TOOL_DESCRIPTION): ToolDefinition<z.output<typeof writeTodosSchema>> {
  return tool({
    name: WRITE_TODOS_TOOL_NAME,
    description,
    schema: writeTodosSchema,
    execute: ({ todos }, runtime) =>
      new Command({
        update: {
          todos,
          messages: [toolMessage(writeTodosResultText(todos), { tool_call_id: runtime.toolCallId, name: WRITE_TODOS_TOOL_NAME })],
        },
      }),
  });
}

/** Plan-mode system prompt addition (the `<todo_list_system>` section, in our words). */
export const TODO_SYSTEM_PROMPT = `
<todo_list_system>
Plan mode is on. Track multi-step work with the \`write_todos\` tool so the user can follow your progress.
- Use it for work with three or more distinct steps, when the user asks for a plan, or gives several tasks at once.
- Skip it for short, single-step or purely conversational requests.
- Keep one item \`in_progress\` at a time (several only when they truly run in parallel).
- Mark an item \`completed\` as soon as it is done; do not save completions for later.
- Revise the list as you learn: add steps you discover, drop steps that no longer apply.
- Finish every item (or explain why it cannot be finished) before giving your final answer.
</todo_list_system>
`;

/** Description of the `write_todos` tool (in our words). */
export const WRITE_TODOS_TOOL_DESCRIPTION = `Create or replace the task list for the current piece of work. Each call sends the whole list.

Use it for work with 3 or more steps, when the user asks for a task list, or when the user gives several tasks. Do not use it for simple, one-step or conversational requests.

Statuses:
- \`pending\`: not started
- \`in_progress\`: being worked on now (normally one at a time)
- \`completed\`: fully done

Mark a task \`in_progress\` before starting it and \`completed\` right after finishing it. Only mark it completed when it is really finished: no unresolved errors, no partial work, no blockers. If you are blocked, keep it \`in_progress\` and add a task describing what must be resolved. Call this tool at most once per response.`;
