import type { Todo } from "../stream/types";

const MARK: Record<string, string> = { completed: "✔", in_progress: "▶", pending: "○" };

/** The plan-mode todo list (values.todos), updated live. */
export function TodoList({ todos }: { todos: Todo[] }) {
  if (!todos.length) return null;
  const done = todos.filter((t) => t.status === "completed").length;
  return (
    <section className="todos" aria-label="Plan">
      <div className="todos-head">
        Plan · {done}/{todos.length} done
      </div>
      <ul>
        {todos.map((t, i) => (
          <li key={i} className={`todo ${t.status ?? "pending"}`} data-testid="todo">
            <span aria-hidden="true">{MARK[t.status ?? "pending"] ?? "○"}</span> {t.content}
            <span className="sr-only"> ({t.status ?? "pending"})</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
