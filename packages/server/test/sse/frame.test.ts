import { describe, expect, it } from "vitest";
import { encodeData, encodeEventData, formatFrame } from "../../src/sse/frame";

describe("encodeData", () => {
  it("encodes plain JSON exactly like JSON.stringify", () => {
    const state = { messages: [{ type: "human", content: [{ type: "text", text: "héllo\n\"x\"" }], n: 1.5, ok: true, none: null, skip: undefined }], list: [1, undefined, "a"] };
    expect(encodeData(state)).toBe(JSON.stringify(state));
    expect(encodeData(undefined)).toBe("null");
    expect(encodeData("text")).toBe('"text"');
  });

  it("turns values JSON cannot represent into strings, however deep", () => {
    const fn = function named() {};
    const out = JSON.parse(encodeData({ a: [{ big: 10n, err: new TypeError("bad"), fn, sym: Symbol("s") }] }));
    expect(out.a[0].big).toBe("10");
    expect(out.a[0].err).toEqual({ name: "TypeError", message: "bad" });
    expect(out.a[0].fn).toBe(String(fn));
    expect(out.a[0].sym).toBe("Symbol(s)");
  });

  it("keeps toJSON (dates) and never throws on cycles", () => {
    const d = new Date(0);
    expect(encodeData({ d })).toBe(JSON.stringify({ d }));
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(encodeData(cyclic)).toBe(JSON.stringify(String(cyclic)));
  });
});

describe("formatFrame", () => {
  it("writes event, data, then id, and a blank line", () => {
    expect(formatFrame("values", { a: 1 }, "1-0")).toBe('event: values\ndata: {"a":1}\nid: 1-0\n\n');
    expect(formatFrame("gap", { b: 2 })).toBe('event: gap\ndata: {"b":2}\n\n');
  });

  it("keeps any payload on one data line: line breaks inside values arrive escaped", () => {
    const fn = function multi() {
      return "a\r\nb";
    };
    const payloads: unknown[] = [
      { text: "line 1\nline 2\r\nline 3\rend", nested: [{ s: "\n\n" }] },
      { messages: [{ type: "ai", id: "nl", content: "a\nb" }], note: "x\ny" },
      [{ type: "AIMessageChunk", id: "c", content: "\n" }, { k: "\r" }],
      { err: new Error("two\nlines"), fn, big: 1n },
      "just\na string",
    ];
    for (const p of payloads) {
      const frame = formatFrame("values", p, "1-0");
      const lines = frame.split(/\r\n|\r|\n/);
      expect(lines).toEqual(["event: values", expect.stringMatching(/^data: /), "id: 1-0", "", ""]);
      expect(JSON.parse(lines[1].slice("data: ".length))).toBeDefined();
    }
  });
});

describe("encodeEventData (per-message JSON cache)", () => {
  const human = { type: "human", content: [{ type: "text", text: "héllo" }], additional_kwargs: {}, id: "h1" };
  const ai = { type: "ai", id: "a1", content: "hi", tool_calls: [], skip: undefined, usage_metadata: { input_tokens: 1 } };
  const tool = { type: "tool", id: "t1", content: "x", tool_call_id: "c1", status: "success" };

  it("writes exactly what JSON.stringify writes for values, updates and messages tuples", () => {
    const values = { messages: [human, ai, tool], title: "T", artifacts: [], none: null, gone: undefined, viewed_images: {} };
    const updates = { model: { messages: [ai] }, "Title.after_model": { messages: [], title: "T" } };
    const tuple = [tool, { langgraph_node: "tools", langgraph_step: 2 }];
    for (const data of [values, updates, tuple, { messages: [] }, { messages: [1, "x"] }, { a: 1 }, [1, 2], "s", null]) {
      expect(encodeEventData(data)).toBe(JSON.stringify(data));
    }
  });

  it("encodes each message object once and a replacement (new object, same id) afresh", () => {
    const m = { type: "ai", id: "a2", content: "first" };
    expect(encodeEventData({ messages: [m] })).toBe('{"messages":[{"type":"ai","id":"a2","content":"first"}]}');
    const replaced = { ...m, content: "second" };
    expect(encodeEventData({ messages: [replaced] })).toBe('{"messages":[{"type":"ai","id":"a2","content":"second"}]}');
    const manyFrames = Array.from({ length: 3 }, () => encodeEventData({ messages: [m, replaced] }));
    expect(new Set(manyFrames).size).toBe(1);
  });

  it("keeps the replacer rules for values JSON cannot represent", () => {
    const out = JSON.parse(encodeEventData({ messages: [{ type: "tool", id: "t2", content: "x", artifact: { n: 5n } }], err: new Error("boom"), fn: () => 1 }));
    expect(out.messages[0].artifact.n).toBe("5");
    expect(out.err).toEqual({ name: "Error", message: "boom" });
    expect(typeof out.fn).toBe("string");
  });
});
