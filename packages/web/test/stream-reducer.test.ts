import { describe, expect, it } from "vitest";
import { applyStreamPart, applyValues, emptyView } from "../src/stream/reducer";
import { mergeToolCallChunks, parsePartialJson } from "../src/stream/merge";
import type { StreamPart, ThreadView } from "../src/stream/types";

function run(parts: StreamPart[], start: ThreadView = emptyView("T"), clock = { t: 1000 }): ThreadView {
  return parts.reduce((v, p) => applyStreamPart(v, p, (clock.t += 10)), start);
}

const chunk = (id: string, content: unknown, extra: Record<string, unknown> = {}) => ({
  event: "messages",
  data: [{ type: "AIMessageChunk", id, content, tool_call_chunks: [], ...extra }, { langgraph_node: "model" }],
});

describe("stream-to-view reducer", () => {
  it("concatenates AIMessageChunk content deltas that share an id, and normalises the type to ai", () => {
    const v = run([
      { event: "metadata", data: { run_id: "R", thread_id: "T" }, id: "1-0" },
      chunk("run-1", "Hel"),
      chunk("run-1", "lo "),
      chunk("run-1", "world"),
    ]);
    expect(v.runId).toBe("R");
    expect(v.phase).toBe("streaming");
    expect(v.messages).toHaveLength(1);
    expect(v.messages[0].type).toBe("ai");
    expect(v.messages[0].content).toBe("Hello world");
    expect(v.lastEventId).toBe("1-0");
  });

  it("concatenates reasoning_content in additional_kwargs", () => {
    const v = run([
      chunk("a", "", { additional_kwargs: { reasoning_content: "Let me " } }),
      chunk("a", "", { additional_kwargs: { reasoning_content: "think." } }),
      chunk("a", "Answer"),
    ]);
    expect(v.messages[0].additional_kwargs?.reasoning_content).toBe("Let me think.");
    expect(v.messages[0].content).toBe("Answer");
  });

  it("merges tool_call_chunks by index and exposes parsed tool_calls while streaming", () => {
    const v = run([
      chunk("a", "", { tool_call_chunks: [{ name: "write_file", args: '{"pa', id: "call_1", index: 0 }] }),
      chunk("a", "", { tool_call_chunks: [{ name: "bash", args: '{"command":"l', id: "call_2", index: 1 }] }),
      chunk("a", "", { tool_call_chunks: [{ name: null, args: 'th":"/mnt/user-data/outputs/r.md"}', id: null, index: 0 }] }),
      chunk("a", "", { tool_call_chunks: [{ name: null, args: 's"}', id: null, index: 1 }] }),
    ]);
    const m = v.messages[0];
    expect(m.tool_call_chunks).toHaveLength(2);
    expect(m.tool_calls).toEqual([
      { id: "call_1", name: "write_file", args: { path: "/mnt/user-data/outputs/r.md" }, type: "tool_call" },
      { id: "call_2", name: "bash", args: { command: "ls" }, type: "tool_call" },
    ]);
  });

  it("a values snapshot replaces the list but keeps messages still streaming; title/artifacts/todos overlay", () => {
    let v = run([chunk("old", "stale text")]);
    v = applyStreamPart(v, {
      event: "values",
      data: {
        messages: [{ type: "human", id: "h1", content: "hi" }],
        title: "Greeting",
        artifacts: ["/mnt/user-data/outputs/a.md"],
        todos: [{ content: "step", status: "in_progress" }],
      },
    });
    // "old" was streamed but is not in the snapshot: it is still kept (it may be mid-stream).
    expect(v.messages.map((m) => m.id)).toEqual(["h1", "old"]);
    expect(v.title).toBe("Greeting");
    expect(v.artifacts).toEqual(["/mnt/user-data/outputs/a.md"]);
    expect(v.todos).toEqual([{ content: "step", status: "in_progress" }]);
    // A later snapshot containing the completed message wins over the streamed copy.
    v = applyStreamPart(v, {
      event: "values",
      data: { messages: [{ type: "human", id: "h1", content: "hi" }, { type: "ai", id: "old", content: "final text" }] },
    });
    expect(v.messages.map((m) => [m.id, m.content])).toEqual([
      ["h1", "hi"],
      ["old", "final text"],
    ]);
    expect(v.streamingIds).toEqual([]);
    // The next snapshot without title keeps the title.
    expect(v.title).toBe("Greeting");
  });

  it("drops messages that are not in the snapshot and not streaming (e.g. the optimistic local copy)", () => {
    let v: ThreadView = { ...emptyView("T"), messages: [{ type: "human", id: "local-1", content: "hi" }] };
    v = applyStreamPart(v, { event: "values", data: { messages: [{ type: "human", id: "srv-1", content: "hi" }] } });
    expect(v.messages.map((m) => m.id)).toEqual(["srv-1"]);
  });

  it("takes the title from updates (TitleMiddleware) and todos from list-wrapped updates", () => {
    let v = applyStreamPart(emptyView("T"), { event: "updates", data: { "TitleMiddleware.after_model": { title: "Quarterly report" } } });
    expect(v.title).toBe("Quarterly report");
    v = applyStreamPart(v, { event: "updates", data: { tools: [{ todos: [{ content: "a", status: "completed" }] }] } });
    expect(v.todos).toEqual([{ content: "a", status: "completed" }]);
  });

  it("replaces a streamed message with a complete (non-chunk) message of the same id and records tool timings", () => {
    const clock = { t: 0 };
    let v = run([chunk("a", "", { tool_call_chunks: [{ name: "bash", args: "{}", id: "c1", index: 0 }] })], emptyView("T"), clock);
    expect(v.timings.c1.start).toBe(10);
    v = run(
      [
        { event: "messages", data: [{ type: "ai", id: "a", content: "", tool_calls: [{ id: "c1", name: "bash", args: { command: "ls" } }] }, {}] },
        { event: "messages", data: [{ type: "tool", id: "t1", tool_call_id: "c1", name: "bash", content: "out" }, {}] },
      ],
      v,
      clock,
    );
    expect(v.messages[0].tool_calls?.[0].args).toEqual({ command: "ls" });
    expect(v.timings.c1).toEqual({ start: 10, end: 30 });
  });

  it("ignores chunks without an id, turns llm_retry into a notice and error into an error phase", () => {
    let v = applyStreamPart(emptyView("T"), { event: "messages", data: [{ type: "AIMessageChunk", content: "x" }, {}] });
    expect(v.messages).toHaveLength(0);
    v = applyStreamPart(v, { event: "custom", data: { type: "llm_retry", attempt: 1, max_attempts: 3, message: "Rate limited, retrying in 2s" } });
    expect(v.notices).toEqual([{ id: 1, kind: "retry", text: "Rate limited, retrying in 2s" }]);
    v = applyStreamPart(v, { event: "custom", data: { type: "task_running", task_id: "x" } });
    expect(v.notices).toHaveLength(1);
    v = applyStreamPart(v, { event: "error", data: { name: "RuntimeError", message: "boom" } });
    expect(v.phase).toBe("error");
    expect(v.error).toBe("boom");
    v = applyStreamPart(v, { event: "end", data: null });
    expect(v.phase).toBe("error");
  });

  it("end marks a successful run done", () => {
    const v = run([{ event: "metadata", data: { run_id: "R" } }, chunk("a", "x"), { event: "end", data: null }]);
    expect(v.phase).toBe("done");
    expect(v.streamingIds).toEqual([]);
  });

  it("replaying the same stream twice from the start (re-join with Last-Event-ID -1) yields the same text", () => {
    const parts: StreamPart[] = [
      { event: "values", data: { messages: [{ type: "human", id: "h", content: "q" }] } },
      chunk("a", "one "),
      chunk("a", "two"),
    ];
    const first = run(parts);
    // After a reload the client starts from the persisted state and replays the retained buffer.
    const rejoined = run(parts, { ...emptyView("T"), messages: [{ type: "human", id: "h", content: "q" }] });
    expect(rejoined.messages.map((m) => m.content)).toEqual(first.messages.map((m) => m.content));
    expect(rejoined.messages[1].content).toBe("one two");
  });
});

describe("applyValues on saved state", () => {
  it("records no tool durations when loading saved state (now = null)", () => {
    const v = applyValues(
      emptyView("T"),
      {
        messages: [
          { type: "ai", id: "a", content: "", tool_calls: [{ id: "c", name: "bash", args: {} }] },
          { type: "tool", id: "t", tool_call_id: "c", name: "bash", content: "x" },
        ],
      },
      null,
    );
    expect(v.timings).toEqual({});
    expect(v.messages).toHaveLength(2);
  });
});

describe("merge helpers", () => {
  it("mergeToolCallChunks appends new indexes and concatenates args of existing ones", () => {
    const merged = mergeToolCallChunks([{ index: 0, args: '{"a":', name: "x", id: "1" }], [
      { index: 0, args: "1}" },
      { index: 1, args: "{}", name: "y", id: "2" },
    ]);
    expect(merged).toEqual([
      { index: 0, args: '{"a":1}', name: "x", id: "1" },
      { index: 1, args: "{}", name: "y", id: "2" },
    ]);
  });

  it("parsePartialJson repairs truncated JSON", () => {
    expect(parsePartialJson('{"filepaths":["/mnt/a.md","/mnt/b')).toEqual({ filepaths: ["/mnt/a.md", "/mnt/b"] });
    expect(parsePartialJson('{"a": {"b": 1},')).toEqual({ a: { b: 1 } });
    expect(parsePartialJson("")).toEqual({});
    expect(parsePartialJson("not json")).toEqual({});
  });
});
