import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { humanMessage, toolMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { z } from "zod";
import { createLoopDetectionMiddleware, LOOP_HARD_STOP_MESSAGE, LOOP_WARNING_MESSAGE } from "../../src/middlewares/loop-detection";
import { hashToolCalls, pythonJsonDumps, stableToolKey } from "../../src/middlewares/loop-detection-hash";
import { callAI, leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

describe("loop-detection hashing", () => {
  it("matches Python json.dumps(sort_keys=True) formatting", () => {
    expect(pythonJsonDumps({ b: "é\n", a: [1, null, true] })).toBe('{"a": [1, null, true], "b": "\\u00e9\\n"}');
  });
  it("escapes each ASCII character as the per-character rule says, also inside otherwise plain text", () => {
    const named: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
    for (let code = 0; code <= 0x7f; code++) {
      const ch = String.fromCharCode(code);
      const escaped = named[ch] ?? (code < 0x20 ? `\\u${code.toString(16).padStart(4, "0")}` : ch);
      expect(pythonJsonDumps(ch)).toBe(`"${escaped}"`);
      expect(pythonJsonDumps(`/mnt/a${ch}b`)).toBe(`"/mnt/a${escaped}b"`);
    }
    expect(pythonJsonDumps("grep -r 'x' /mnt/user-data")).toBe(`"grep -r 'x' /mnt/user-data"`);
    expect(pythonJsonDumps("naïve 😀")).toBe('"na\\u00efve \\ud83d\\ude00"');
  });
  it("produces DeerFlow's md5 hash and is order independent", () => {
    const a = hashToolCalls([{ name: "bash", args: { command: "ls" } }, { name: "read_file", args: { path: "/a" } }]);
    const b = hashToolCalls([{ name: "read_file", args: { path: "/a", description: "x" } }, { name: "bash", args: { command: "ls", description: "other" } }]);
    expect(a).toBe("421775c7779f"); // computed with DeerFlow's Python implementation
    expect(b).toBe(a);
  });
  it("buckets read_file by 200 lines and hashes write_file by full args", () => {
    expect(stableToolKey("read_file", { path: "/f", start_line: 1, end_line: 150 })).toBe("/f:0-0");
    expect(stableToolKey("read_file", { path: "/f", start_line: 201, end_line: 420 })).toBe("/f:1-2");
    expect(stableToolKey("write_file", { path: "/f", content: "a" })).not.toBe(stableToolKey("write_file", { path: "/f", content: "b" }));
    expect(stableToolKey("web_search", { query: "q", description: "x" })).toBe('{"query": "q"}');
  });
});

describe("LoopDetectionMiddleware", () => {
  it("validates hard >= warn (ConfigError naming the option)", () => {
    expect(() => createLoopDetectionMiddleware({ warn_threshold: 5, hard_limit: 3 })).toThrow(ConfigError);
    expect(() => createLoopDetectionMiddleware({ warn_threshold: 5, hard_limit: 3 })).toThrow(/hard_limit/);
    expect(() => createLoopDetectionMiddleware({ tool_freq_overrides: { bash: { warn: 10, hard_limit: 5 } } })).toThrow(/tool_freq_overrides/);
  });

  it("warns at 3 (queued, injected once at the next model call), hard-stops at 5", async () => {
    const mw = createLoopDetectionMiddleware();
    const rt = leadRuntime();
    const call = () => leadState([humanMessage("go"), callAI([{ name: "bash", args: { command: "ls" } }], { response_metadata: { finish_reason: "tool_calls" }, additional_kwargs: { tool_calls: [{}] } })]);
    expect(await mw.afterModel!(call(), rt)).toBeUndefined();
    expect(await mw.afterModel!(call(), rt)).toBeUndefined();
    expect(await mw.afterModel!(call(), rt)).toBeUndefined(); // 3rd: queued, state untouched
    const first = await wrapModel(mw, leadState([humanMessage("go")]), rt);
    const injected = first.seen[0].messages.at(-1)!;
    expect(injected.type).toBe("human");
    expect(injected.name).toBe("loop_warning");
    expect(injected.content).toBe(LOOP_WARNING_MESSAGE);
    const second = await wrapModel(mw, leadState([humanMessage("go")]), rt);
    expect(second.seen[0].messages).toHaveLength(1); // drained
    expect(await mw.afterModel!(call(), rt)).toBeUndefined(); // 4th: already warned
    const stop = (await mw.afterModel!(call(), rt)) as { messages: any[] };
    const msg = stop.messages[0];
    expect(msg.tool_calls).toEqual([]);
    expect(msg.additional_kwargs.tool_calls).toBeUndefined();
    expect(msg.response_metadata.finish_reason).toBe("stop");
    expect(msg.content).toBe(`\n\n${LOOP_HARD_STOP_MESSAGE}`.trimStart());
    expect(rt.outcome.stopReason).toBe("loop_capped");
  });

  it("tracks threads separately and evicts LRU threads beyond max_tracked_threads", async () => {
    const mw = createLoopDetectionMiddleware({ warn_threshold: 2, hard_limit: 3, max_tracked_threads: 1 });
    const st = leadState([callAI([{ name: "bash", args: { command: "ls" } }])]);
    const a = leadRuntime({ threadId: "A" });
    const b = leadRuntime({ threadId: "B" });
    await mw.afterModel!(st, a);
    await mw.afterModel!(st, b); // evicts A
    await mw.afterModel!(st, a); // A starts over: count 1
    expect((await wrapModel(mw, leadState([]), a)).seen[0].messages).toHaveLength(0);
  });

  it("per-tool frequency: warn and hard stop with overrides", async () => {
    const mw = createLoopDetectionMiddleware({ tool_freq_overrides: { read_file: { warn: 2, hard_limit: 3 } } });
    const rt = leadRuntime();
    const read = (p: string) => leadState([callAI([{ name: "read_file", args: { path: p } }])]);
    await mw.afterModel!(read("/1"), rt);
    await mw.afterModel!(read("/2"), rt);
    const w = await wrapModel(mw, leadState([]), rt);
    expect(w.seen[0].messages[0].content).toBe(
      "[LOOP DETECTED] You have called read_file 2 times without producing a final answer. Stop calling tools and produce your final answer now. If you cannot complete the task, summarize what you accomplished so far.",
    );
    const stop = (await mw.afterModel!(read("/3"), rt)) as { messages: any[] };
    expect(stop.messages[0].content).toContain("[FORCED STOP] Tool read_file called 3 times");
  });

  it("drops pending warnings of other runs at before_agent and caps at 4", async () => {
    const mw = createLoopDetectionMiddleware({ warn_threshold: 1, hard_limit: 50 });
    const r1 = leadRuntime({ runId: "r1" });
    for (let i = 0; i < 6; i++) await mw.afterModel!(leadState([callAI([{ name: "bash", args: { command: `c${i}` } }])]), r1);
    // all warnings share one text → deduped into one
    expect(String((await wrapModel(mw, leadState([]), r1)).seen[0].messages[0].content).split("[LOOP DETECTED]").length - 1).toBe(1);
    await mw.afterModel!(leadState([callAI([{ name: "bash", args: { command: "zz" } }])]), r1);
    const r2 = leadRuntime({ runId: "r2" });
    await mw.beforeAgent!(leadState([]), r2);
    expect((await wrapModel(mw, leadState([]), r1)).seen[0].messages).toHaveLength(0);
  });

  it("full run: the warning appears once at the end of the next request, then hard stop ends the run", async () => {
    const step = { toolCalls: [{ name: "echo", args: { command: "same" } }] };
    const model = new ScriptedModel([step, step, step, step, step, "never"]);
    const echo = tool({ name: "echo", description: "echo", schema: z.object({ command: z.string() }), execute: ({ command }) => command });
    const agent = createAgent({ model, tools: [echo], middleware: [createLoopDetectionMiddleware()] });
    const res = await agent.invoke({ messages: [humanMessage("loop please")] }, { threadId: "loop1", context: {} });
    expect(res.status).toBe("success");
    expect(model.callCount).toBe(5);
    const warned = model.requests.map((r) => r.messages.filter((m) => m.name === "loop_warning").length);
    expect(warned).toEqual([0, 0, 0, 1, 0]);
    expect(model.requests[3].messages.at(-1)!.content).toBe(LOOP_WARNING_MESSAGE);
    const last = res.state.messages.at(-1)!;
    expect(last.type).toBe("ai");
    expect((last as any).tool_calls).toEqual([]);
    expect(String(last.content)).toContain("[FORCED STOP]");
    expect(res.state.messages.some((m) => m.name === "loop_warning")).toBe(false);
    expect(res.state.messages.filter((m) => m.type === "tool")).toHaveLength(4);
    void toolMessage;
  });
});
