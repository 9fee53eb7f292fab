import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Terminal } from "../src/io";
import { TurnRenderer } from "../src/render";

function capture(): { term: Terminal; text(): string } {
  const out = new PassThrough() as unknown as NodeJS.WriteStream;
  let buf = "";
  (out as unknown as PassThrough).on("data", (d) => (buf += d));
  return { term: new Terminal(out, out), text: () => buf };
}

describe("TurnRenderer: nested sub-agent progress lines", () => {
  it("prints start, steps and terminal lines under the task call", async () => {
    const { term, text } = capture();
    const r = new TurnRenderer(term);
    r.handle({ type: "messages-tuple", data: { type: "ai", id: "a1", content: "", tool_calls: [{ id: "t1", name: "task", args: { description: "find sources", prompt: "look" } }] } });
    r.handle({ type: "custom", data: { type: "task_started", task_id: "t1", description: "find sources", model_name: "m1" } });
    r.handle({ type: "custom", data: { type: "task_running", task_id: "t1", message_index: 1, message: { type: "ai", content: "Searching the web", tool_calls: [{ name: "web_search", args: { query: "deer" } }] }, usage: { total_tokens: 12 } } });
    r.handle({ type: "custom", data: { type: "task_completed", task_id: "t1", result: "3 sources", usage: { input_tokens: 20, output_tokens: 10, total_tokens: 30 } } });
    r.handle({ type: "custom", data: { type: "task_timed_out", task_id: "t2", error: "Execution timed out after 5 seconds", usage: { total_tokens: 4 } } });
    r.handle({ type: "custom", data: { type: "llm_retry", attempt: 1 } });
    r.handle({ type: "messages-tuple", data: { type: "tool", id: "m2", tool_call_id: "t1", name: "task", content: "Task Succeeded. Result: 3 sources" } });
    r.finish();
    await new Promise((res) => setImmediate(res));
    expect(text().split("\n")).toEqual([
      '  → task(prompt="look")',
      '    ⇢ sub-agent "find sources" started (m1)',
      '    │ find sources #1: Searching the web → web_search(query="deer")',
      "    ✓ find sources: completed · 30 tokens",
      "    ✗ t2: timed out — Execution timed out after 5 seconds · 4 tokens",
      "  ✓ task: Task Succeeded. Result: 3 sources",
      "",
    ]);
  });
});
