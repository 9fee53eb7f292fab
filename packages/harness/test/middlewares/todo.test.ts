import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { TODO_SYSTEM_PROMPT } from "../../src/builtins/write-todos";
import { createTodoMiddleware, PARALLEL_WRITE_TODOS_ERROR, todoCompletionReminderText } from "../../src/middlewares/todo";
import { callAI, leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

const todos = [
  { content: "Research", status: "completed" as const },
  { content: "Write report", status: "in_progress" as const },
];

describe("TodoMiddleware", () => {
  it("contributes write_todos and appends the todo system prompt to the request", async () => {
    const mw = createTodoMiddleware();
    expect(mw.tools!.map((t) => t.name)).toEqual(["write_todos"]);
    const { seen } = await wrapModel(mw, leadState([humanMessage("x")]), leadRuntime(), { systemPrompt: "BASE" });
    expect(seen[0].systemPrompt).toBe(`BASE\n\n${TODO_SYSTEM_PROMPT}`);
  });

  it("injects a hidden todo_reminder when write_todos left the context, once", async () => {
    const mw = createTodoMiddleware();
    const st = leadState([humanMessage("go")], { todos });
    const res = (await mw.beforeModel!(st, leadRuntime())) as any;
    const r = res.messages[0];
    expect(r).toMatchObject({ type: "human", name: "todo_reminder", additional_kwargs: { hide_from_ui: true } });
    expect(r.content).toBe(
      "<system_reminder>\nYour todo list from earlier is no longer visible in the current context window, but it is still active. Here is the current state:\n\n- [completed] Research\n- [in_progress] Write report\n\nContinue tracking and updating this todo list as you work. Call `write_todos` whenever the status of any item changes.\n</system_reminder>",
    );
    expect(await mw.beforeModel!(leadState([humanMessage("go"), r], { todos }), leadRuntime())).toBeUndefined();
    expect(await mw.beforeModel!(leadState([callAI([{ name: "write_todos" }])], { todos }), leadRuntime())).toBeUndefined();
    expect(await mw.beforeModel!(leadState([humanMessage("go")]), leadRuntime())).toBeUndefined();
  });

  it("rejects parallel write_todos calls with error tool messages", async () => {
    const mw = createTodoMiddleware();
    const res = (await mw.afterModel!(leadState([callAI([{ name: "write_todos", id: "a" }, { name: "write_todos", id: "b" }])]), leadRuntime())) as any;
    expect(res.messages.map((m: any) => [m.tool_call_id, m.status, m.content])).toEqual([
      ["a", "error", PARALLEL_WRITE_TODOS_ERROR],
      ["b", "error", PARALLEL_WRITE_TODOS_ERROR],
    ]);
  });

  it("premature exit → jump to model with a completion reminder, at most 2 per run", async () => {
    const mw = createTodoMiddleware();
    const rt = leadRuntime();
    const st = leadState([humanMessage("go"), aiMessage("I'm done")], { todos });
    for (let i = 0; i < 2; i++) {
      expect(await mw.afterModel!(st, rt)).toEqual({ jumpTo: "model" });
      const { seen } = await wrapModel(mw, st, rt);
      const last = seen[0].messages.at(-1)!;
      expect(last).toMatchObject({ name: "todo_completion_reminder", additional_kwargs: { hide_from_ui: true } });
      expect(last.content).toBe(todoCompletionReminderText(todos));
      expect(String(last.content)).toContain("- [in_progress] Write report");
      expect(String(last.content)).not.toContain("Research");
    }
    expect(await mw.afterModel!(st, rt)).toBeUndefined();
    expect(await mw.afterModel!(leadState(st.messages, { todos: todos.map((t) => ({ ...t, status: "completed" })) }), leadRuntime({ runId: "r2" }))).toBeUndefined();
    expect(await mw.afterModel!(leadState([humanMessage("go"), callAI([{ name: "x" }])], { todos }), leadRuntime({ runId: "r3" }))).toBeUndefined();
  });

  it("full run (plan mode): write_todos updates state.todos and the guard keeps the model working", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "write_todos", args: { todos: [{ content: "A", status: "in_progress" }, { content: "B", status: "pending" }] } }] },
      "Finished early",
      { toolCalls: [{ name: "write_todos", args: { todos: [{ content: "A", status: "completed" }, { content: "B", status: "completed" }] } }] },
      "All done",
    ]);
    const agent = createAgent({ model, stateSchema: threadStateSchema, middleware: [createTodoMiddleware()], systemPrompt: "SYS" });
    const res = await agent.invoke({ messages: [humanMessage("plan")] }, { threadId: "todo1" });
    expect(res.state.todos).toEqual([{ content: "A", status: "completed" }, { content: "B", status: "completed" }]);
    expect(res.state.messages.at(-1)!.content).toBe("All done");
    expect(model.requests[0].tools.map((t) => t.name)).toContain("write_todos");
    expect(model.requests[0].messages[0].content).toBe(`SYS\n\n${TODO_SYSTEM_PROMPT}`);
    const reminder = model.requests[2].messages.at(-1)!;
    expect(reminder.name).toBe("todo_completion_reminder");
    expect(String(reminder.content)).toContain("- [in_progress] A\n- [pending] B");
    const toolMsg = res.state.messages.find((m) => m.type === "tool")!;
    expect(toolMsg.content).toBe("Updated todo list to [{'content': 'A', 'status': 'in_progress'}, {'content': 'B', 'status': 'pending'}]");
    expect(res.state.messages.some((m) => m.name === "todo_completion_reminder")).toBe(false);
  });
});
