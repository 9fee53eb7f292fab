import { describe, expect, it } from "vitest";
import { isCommand } from "../../src/state";
import { createWriteTodosTool, writeTodosResultText } from "../../src/builtins/write-todos";

describe("write_todos tool", () => {
  it("returns a Command updating todos plus a tool message", async () => {
    const t = createWriteTodosTool();
    const todos = [{ content: "it's", status: "pending" as const }];
    const out = await t.execute({ todos }, { toolCallId: "c1" } as never);
    expect(isCommand(out)).toBe(true);
    if (!isCommand(out)) return;
    expect(out.update.todos).toEqual(todos);
    expect((out.update.messages as any[])[0]).toMatchObject({ type: "tool", tool_call_id: "c1", name: "write_todos", content: "Updated todo list to [{'content': 'it\\'s', 'status': 'pending'}]" });
    expect(writeTodosResultText([])).toBe("Updated todo list to []");
  });
  it("validates statuses", () => {
    const t = createWriteTodosTool();
    expect(t.schema.safeParse({ todos: [{ content: "x", status: "done" }] }).success).toBe(false);
    expect((t.parameters as any).properties.todos.items.properties.status.enum).toEqual(["pending", "in_progress", "completed"]);
  });
});
