import { describe, expect, it } from "vitest";
import { MessageCoalescer, mergeChunks } from "../../src/runs/message-coalescer";

const chunk = (id: string, content: unknown, extra: Record<string, unknown> = {}) => ({
  type: "AIMessageChunk",
  id,
  content,
  additional_kwargs: {},
  response_metadata: {},
  tool_calls: [],
  invalid_tool_calls: [],
  tool_call_chunks: [],
  usage_metadata: null,
  ...extra,
});

describe("MessageCoalescer", () => {
  it("merges same-tick deltas of one message, keeps order with other events, flushes at the end of the tick", async () => {
    const out: Array<[string, unknown]> = [];
    const c = new MessageCoalescer((e, d) => out.push([e, d]));
    const meta = { langgraph_node: "model" };
    c.push("messages", [chunk("a", "Hel", { additional_kwargs: { reasoning_content: "th" } }), meta]);
    c.push("messages", [chunk("a", "lo", { additional_kwargs: { reasoning_content: "ink" }, tool_call_chunks: [{ index: 0, id: "c1", name: "t", args: '{"q":' }] }), meta]);
    c.push("messages", [chunk("a", "", { tool_call_chunks: [{ index: 0, id: null, name: null, args: '"x"}' }], invalid_tool_calls: [{ name: null, args: '"x"}', id: null, error: null }] }), meta]);
    expect(out).toHaveLength(0);
    // the `last` chunk (usage) is never merged: it flushes the held deltas and goes out on its own
    c.push("messages", [chunk("a", "", { usage_metadata: { total_tokens: 3 }, chunk_position: "last" }), meta]);
    c.push("values", { messages: [] });
    expect(out.map((o) => o[0])).toEqual(["messages", "messages", "values"]);
    const merged = (out[0][1] as [Record<string, unknown>, unknown])[0];
    expect(merged).toMatchObject({
      id: "a",
      content: "Hello",
      additional_kwargs: { reasoning_content: "think" },
      // fragments of one call merge by index, as LangChain adds chunks; the merged text is read again
      tool_call_chunks: [{ index: 0, id: "c1", name: "t", args: '{"q":"x"}' }],
      tool_calls: [{ name: "t", id: "c1", args: { q: "x" } }],
      invalid_tool_calls: [],
      usage_metadata: null,
    });
    expect(merged.chunk_position ?? null).toBeNull();
    expect((out[1][1] as [Record<string, unknown>])[0]).toMatchObject({ usage_metadata: { total_tokens: 3 }, chunk_position: "last" });
    expect((out[0][1] as unknown[])[1]).toBe(meta);
    c.push("messages", [chunk("b", "x"), meta]);
    c.push("messages", [chunk("c", "y"), meta]); // another message id: not merged
    await new Promise((r) => setImmediate(r));
    expect(out.slice(3).map((o) => (o[1] as Array<{ id: string }>)[0].id)).toEqual(["b", "c"]);
  });

  it("does not hold deltas across ticks, and passes tool messages and block contents through", async () => {
    const out: Array<[string, unknown]> = [];
    const c = new MessageCoalescer((e, d) => out.push([e, d]));
    c.push("messages", [chunk("a", "one"), {}]);
    await new Promise((r) => setImmediate(r));
    c.push("messages", [chunk("a", "two"), {}]);
    await new Promise((r) => setImmediate(r));
    expect(out.map((o) => (o[1] as Array<{ content: string }>)[0].content)).toEqual(["one", "two"]);
    const tool = [{ type: "tool", id: "t", content: "ok", tool_call_id: "c1" }, {}];
    const blocks = [chunk("z", [{ type: "text", text: "hi" }]), {}];
    c.push("messages", tool);
    c.push("messages", blocks);
    expect(out.slice(2).map((o) => o[1])).toEqual([tool, blocks]);
    expect(mergeChunks(chunk("q", "a") as never, chunk("q", "b") as never).content).toBe("ab");
  });
});
