import { describe, expect, it } from "vitest";
import { AIMessageAccumulator } from "../../src/models";
import { chunkToolCalls, mergeToolCallChunks } from "../../src/models/chunk-tool-calls";

describe("chunkToolCalls", () => {
  it("reads each fragment on its own, as LangChain streams them: first with its name and id, continuations with name '' and id null, unreadable ones invalid", () => {
    expect(chunkToolCalls([{ index: 0, id: "c1", name: "present_files", args: "" }])).toEqual({
      tool_calls: [{ name: "present_files", args: {}, id: "c1", type: "tool_call" }],
      invalid_tool_calls: [],
    });
    expect(chunkToolCalls([{ index: 0, id: null, name: null, args: '{"filepaths":["/mnt/use' }]).tool_calls).toEqual([
      { name: "", args: { filepaths: ["/mnt/use"] }, id: null, type: "tool_call" },
    ]);
    expect(chunkToolCalls([{ index: 0, id: null, name: null, args: 'r.md"]}' }])).toEqual({
      tool_calls: [],
      invalid_tool_calls: [{ name: null, args: 'r.md"]}', id: null, error: null, type: "invalid_tool_call" }],
    });
  });

  it("merges fragments by index: text concatenated, the first id kept", () => {
    const merged = mergeToolCallChunks([{ index: 0, id: "c1", name: "t", args: '{"a":' }], [{ index: 0, id: null, name: null, args: "1}" }, { index: 1, id: "c2", name: "u", args: "{}" }]);
    expect(merged).toEqual([{ index: 0, id: "c1", name: "t", args: '{"a":1}' }, { index: 1, id: "c2", name: "u", args: "{}" }]);
    expect(chunkToolCalls(merged).tool_calls.map((c) => [c.id, c.args])).toEqual([["c1", { a: 1 }], ["c2", {}]]);
  });
});

describe("AIMessageAccumulator chunks", () => {
  it("streams tool-call fragments with LangChain's per-chunk calls and still finishes with the whole call", () => {
    const acc = new AIMessageAccumulator("lc_run--x");
    const first = acc.push({ type: "tool-call-delta", index: 0, id: "c1", name: "write", argsDelta: '{"path":"/a' });
    const next = acc.push({ type: "tool-call-delta", index: 0, argsDelta: '"}' });
    expect(first!.tool_calls).toEqual([{ name: "write", args: { path: "/a" }, id: "c1", type: "tool_call" }]);
    expect(first!.tool_call_chunks).toEqual([{ type: "tool_call_chunk", index: 0, id: "c1", name: "write", args: '{"path":"/a' }]);
    expect(next!.tool_call_chunks[0]).toMatchObject({ id: null, name: null });
    expect(next!.invalid_tool_calls).toEqual([{ name: null, args: '"}', id: null, error: null, type: "invalid_tool_call" }]);
    acc.push({ type: "finish", finishReason: "tool_calls" });
    expect(acc.finish().tool_calls).toEqual([{ id: "c1", name: "write", args: { path: "/a" }, type: "tool_call" }]);
  });
});
