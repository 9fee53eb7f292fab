import type { AIMessage, ToolCall } from "../messages";
import type { Todo } from "../state";

/** One action a model step took, for the UI's per-step token attribution. */
export interface AttributionAction {
  kind: string;
  tool_call_id: string | null;
  [key: string]: unknown;
}

/** `additional_kwargs.token_usage_attribution` of an AI message. */
export interface TokenUsageAttribution {
  version: 1;
  kind: "todo_update" | "subagent_dispatch" | "tool_batch" | "final_answer" | "thinking";
  shared_attribution: boolean;
  tool_call_ids: string[];
  actions: AttributionAction[];
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim() : null);

function normaliseTodos(v: unknown): Partial<Todo>[] {
  if (!Array.isArray(v)) return [];
  const out: Partial<Todo>[] = [];
  for (const item of v) {
    if (!item || typeof item !== "object") continue;
    const t: Partial<Todo> = {};
    const c = str((item as Record<string, unknown>).content);
    const s = (item as Record<string, unknown>).status;
    if (c !== null) t.content = c;
    if (s === "pending" || s === "in_progress" || s === "completed") t.status = s;
    out.push(t);
  }
  return out;
}

function todoKind(prev: Partial<Todo> | null, cur: Partial<Todo>): string {
  if (prev && prev.content !== cur.content) return "todo_update";
  if (cur.status === "completed") return "todo_complete";
  if (cur.status === "in_progress") return "todo_start";
  return "todo_update";
}

function todoActions(prev: Partial<Todo>[], next: Partial<Todo>[]): Array<{ kind: string; content: string }> {
  const byContent = new Map<string, number[]>();
  prev.forEach((t, i) => {
    if (t.content) byContent.set(t.content, [...(byContent.get(t.content) ?? []), i]);
  });
  const matched = new Set<number>();
  const actions: Array<{ kind: string; content: string }> = [];
  next.forEach((todo, index) => {
    const content = todo.content;
    if (!content) return;
    let match: Partial<Todo> | null = null;
    const candidates = byContent.get(content);
    if (candidates) {
      while (candidates.length && matched.has(candidates[0])) candidates.shift();
      if (candidates.length) {
        const pi = candidates.shift() as number;
        matched.add(pi);
        match = prev[pi];
      }
    }
    if (!match && !byContent.has(content) && index < prev.length && !matched.has(index)) {
      match = prev[index];
      matched.add(index);
    }
    if (match && match.content === content && match.status === todo.status) return;
    actions.push({ kind: todoKind(match, todo), content });
  });
  prev.forEach((t, i) => {
    if (!matched.has(i) && t.content) actions.push({ kind: "todo_remove", content: t.content });
  });
  return actions;
}

function describe(call: ToolCall, todos: Partial<Todo>[]): AttributionAction[] {
  const name = str(call.name) ?? "unknown";
  const args = call.args && typeof call.args === "object" ? call.args : {};
  const id = str(call.id);
  if (name === "write_todos") {
    const acts = todoActions(todos, normaliseTodos(args.todos));
    if (!acts.length) return [{ kind: "tool", tool_name: name, tool_call_id: id }];
    return acts.map((a) => ({ ...a, tool_call_id: id }));
  }
  if (name === "task") return [{ kind: "subagent", description: str(args.description), subagent_type: str(args.subagent_type), tool_call_id: id }];
  if (name === "web_search" || name === "image_search") return [{ kind: "search", tool_name: name, query: str(args.query), tool_call_id: id }];
  if (name === "present_files") return [{ kind: "present_files", tool_call_id: id }];
  if (name === "ask_clarification") return [{ kind: "clarification", tool_call_id: id }];
  return [{ kind: "tool", tool_name: name, description: str(args.description), tool_call_id: id }];
}

/** Build the step attribution of an AI message (DeerFlow's `_build_attribution`). */
export function buildTokenUsageAttribution(message: AIMessage, todos: Todo[]): TokenUsageAttribution {
  const actions: AttributionAction[] = [];
  let current: Partial<Todo>[] = [...todos];
  for (const call of message.tool_calls ?? []) {
    actions.push(...describe(call, current));
    if (call.name === "write_todos") current = normaliseTodos((call.args ?? {}).todos);
  }
  const ids = (message.tool_calls ?? []).map((c) => str(c.id)).filter((x): x is string => x !== null);
  let kind: TokenUsageAttribution["kind"];
  if (actions.length) {
    const first = actions[0].kind;
    if (actions.length === 1 && ["todo_start", "todo_complete", "todo_update", "todo_remove"].includes(first)) kind = "todo_update";
    else if (actions.length === 1 && first === "subagent") kind = "subagent_dispatch";
    else kind = "tool_batch";
  } else {
    kind = (typeof message.content === "string" ? message.content : message.content.length) ? "final_answer" : "thinking";
  }
  return { version: 1, kind, shared_attribution: actions.length > 1, tool_call_ids: ids, actions };
}
