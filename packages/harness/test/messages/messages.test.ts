import { describe, expect, it } from "vitest";
import { aiMessage, coerceMessage, contentText, hasToolCalls, humanMessage, lastGenuineHumanIndex, lastIndexOfType, lastMessageOfType, reasoningText, toolMessage } from "../../src/messages";
import { ValidationError } from "../../src/errors";
import { AIMessageAccumulator } from "../../src/models";

describe("messages", () => {
  it("builds LangChain-serialised shapes", () => {
    const ai = aiMessage("hi", { tool_calls: [{ id: "c1", name: "x", args: { a: 1 } }], usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } });
    expect(ai).toMatchObject({ type: "ai", content: "hi", tool_calls: [{ id: "c1", name: "x", args: { a: 1 }, type: "tool_call" }], invalid_tool_calls: [], additional_kwargs: {}, response_metadata: {} });
    expect(ai.id).toMatch(/^lc_run--[0-9a-f]{8}-[0-9a-f]{4}-7/);
    const t = toolMessage("ok", { tool_call_id: "c1", name: "x", artifact: { a: 1 } });
    expect(t).toMatchObject({ type: "tool", tool_call_id: "c1", status: "success", artifact: { a: 1 } });
    expect(hasToolCalls(ai)).toBe(true);
  });

  it("reads text and reasoning from strings and blocks", () => {
    expect(contentText([{ type: "text", text: "a" }, { type: "image_url", image_url: "x" }, { type: "text", text: "b" }])).toBe("ab");
    const ai = aiMessage([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "x" }], { additional_kwargs: { reasoning_content: "r" } });
    expect(reasoningText(ai)).toBe("rhmm");
  });

  it("coerces wire dicts and rejects bad ones with the location", () => {
    expect(coerceMessage({ role: "user", content: "hi" }).type).toBe("human");
    expect(coerceMessage({ type: "ai", content: "x", tool_calls: [{ id: "1", name: "t", args: {} }] })).toMatchObject({ type: "ai", tool_calls: [{ name: "t" }] });
    expect(() => coerceMessage({ type: "robot", content: "x" }, "input.messages[2]")).toThrow(ValidationError);
    expect(() => coerceMessage({ type: "robot", content: "x" }, "input.messages[2]")).toThrow(/input\.messages\[2\]/);
    expect(() => coerceMessage({ type: "tool", content: "x" })).toThrow(/tool_call_id/);
    expect(() => coerceMessage({ type: "human", content: 5 })).toThrow(/content/);
  });

  it("finds the last genuine (visible) human message", () => {
    const msgs = [humanMessage("a"), aiMessage("b"), humanMessage("hidden", { additional_kwargs: { hide_from_ui: true } })];
    expect(lastGenuineHumanIndex(msgs)).toBe(0);
  });

  it("accumulates stream parts into chunks and a final message; bad JSON becomes invalid_tool_calls", () => {
    const acc = new AIMessageAccumulator("run-x");
    acc.push({ type: "reasoning-delta", text: "think" });
    expect(acc.push({ type: "text-delta", text: "Hel" })?.content).toBe("Hel");
    acc.push({ type: "text-delta", text: "lo" });
    acc.push({ type: "tool-call-delta", index: 0, id: "c1", name: "f", argsDelta: '{"a":' });
    acc.push({ type: "tool-call-delta", index: 0, argsDelta: "1}" });
    acc.push({ type: "tool-call-delta", index: 1, id: "c2", name: "g", argsDelta: "{oops" });
    const last = acc.push({ type: "finish", finishReason: "tool_calls", usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } });
    expect(last?.chunk_position).toBe("last");
    const msg = acc.finish();
    expect(msg.content).toBe("Hello");
    expect(msg.additional_kwargs.reasoning_content).toBe("think");
    expect(msg.tool_calls).toEqual([{ id: "c1", name: "f", args: { a: 1 }, type: "tool_call" }]);
    expect(msg.invalid_tool_calls[0]).toMatchObject({ id: "c2", name: "g", args: "{oops" });
    expect(msg.response_metadata.finish_reason).toBe("tool_calls");
    expect(msg.usage_metadata?.total_tokens).toBe(7);
  });
});

describe("lastIndexOfType / lastMessageOfType", () => {
  it("find the last message of a type, or say there is none", () => {
    const ai1 = aiMessage("first");
    const ai2 = aiMessage("second", { tool_calls: [{ id: "c1", name: "t", args: {} }] });
    const msgs = [humanMessage("hi"), ai1, toolMessage("r", { tool_call_id: "x" }), ai2, toolMessage("r2", { tool_call_id: "c1" })];
    expect(lastIndexOfType(msgs, "ai")).toBe(3);
    expect(lastMessageOfType(msgs, "ai")).toBe(ai2);
    expect(lastIndexOfType(msgs, "system")).toBe(-1);
    expect(lastMessageOfType(msgs, "system")).toBeUndefined();
    expect(lastIndexOfType([], "human")).toBe(-1);
  });
});
