import { describe, expect, it } from "vitest";
import { ScriptedModel } from "../../src/testing";
import { collectModelStream } from "../../src/models";
import { humanMessage } from "../../src/messages";
import type { ModelStreamPart } from "../../src/models";
import { ModelCallError } from "../../src/errors";

const req = (text = "hi") => ({ messages: [humanMessage(text)], tools: [] });

describe("ScriptedModel", () => {
  it("streams text word by word, records requests and reports usage", async () => {
    const m = new ScriptedModel(["Hello there friend"]);
    const parts: ModelStreamPart[] = [];
    for await (const p of m.stream(req("q"))) parts.push(p);
    expect(parts.filter((p) => p.type === "text-delta").map((p) => (p as { text: string }).text)).toEqual(["Hello", " there", " friend"]);
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" });
    expect(m.requests[0].messages[0].content).toBe("q");
  });

  it("plays reasoning, tool calls, dynamic steps and errors", async () => {
    const m = new ScriptedModel([
      { reasoning: "think", toolCalls: [{ name: "f", args: { a: 1 }, id: "c1" }] },
      (r) => `you said ${(r.messages[0].content as string).toUpperCase()}`,
      { error: { kind: "rate_limit", status: 429, retryAfterMs: 1500 } },
    ]);
    const a = await collectModelStream(m.stream(req()));
    expect(a.additional_kwargs.reasoning_content).toBe("think");
    expect(a.tool_calls).toEqual([{ id: "c1", name: "f", args: { a: 1 }, type: "tool_call" }]);
    expect(a.response_metadata.finish_reason).toBe("tool_calls");
    expect((await collectModelStream(m.stream(req("yo")))).content).toBe("you said YO");
    const err = await collectModelStream(m.stream(req())).catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err).toMatchObject({ kind: "rate_limit", status: 429, retryAfterMs: 1500 });
    await expect(collectModelStream(m.stream(req()))).rejects.toThrow(/script exhausted/);
  });
});
