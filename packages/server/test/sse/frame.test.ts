import { describe, expect, it } from "vitest";
import { encodeData, formatFrame } from "../../src/sse/frame";

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
});
