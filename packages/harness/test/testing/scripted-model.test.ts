import { describe, expect, it } from "vitest";
import { ScriptedModel, ScriptIncompleteError } from "../../src/testing";
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

  it("assertComplete() passes when every step was consumed and nothing ran past the script", async () => {
    const m = new ScriptedModel(["one", { text: "two" }]);
    await collectModelStream(m.stream(req()));
    await collectModelStream(m.stream(req()));
    expect(() => m.assertComplete()).not.toThrow();
  });

  it("assertComplete() lists the steps a test left unconsumed", async () => {
    const m = new ScriptedModel(["first", { text: "Writing it.", toolCalls: [{ name: "write_file", args: {} }] }, () => "later"]);
    await collectModelStream(m.stream(req()));
    const err = (() => {
      try {
        m.assertComplete();
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ScriptIncompleteError);
    expect(err).toMatchObject({ code: "scripted_model_incomplete", details: { calls: 1, scriptLength: 3, unconsumed: 2 } });
    const message = (err as Error).message;
    expect(message).toContain("2 of 3 scripted step(s) not consumed after 1 call(s)");
    expect(message).toContain('step #2: tool calls [write_file] + text "Writing it."');
    expect(message).toContain("step #3: a function of the request");
  });

  it("a call past the script fails naming the call index and script length, and assertComplete() still fails after the error was swallowed", async () => {
    const m = new ScriptedModel(["only"]);
    await collectModelStream(m.stream(req()));
    const err = await collectModelStream(m.stream(req())).catch((e) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err.message).toContain("call #2 (index 1) is past the end of the script");
    expect(err.message).toContain("script exhausted after 1 step(s)");
    expect(err.details).toEqual({ callIndex: 1, scriptLength: 1 });
    // A runtime may convert the throw into an error message; the overrun is remembered.
    expect(() => m.assertComplete()).toThrow(/call\(s\) #2 went past the end of the script \(1 step\(s\)\)/);
  });

  it("repeat-last never overruns", async () => {
    const m = new ScriptedModel(["again"], { onExhausted: "repeat-last" });
    for (let i = 0; i < 3; i++) expect((await collectModelStream(m.stream(req()))).content).toBe("again");
    expect(() => m.assertComplete()).not.toThrow();
  });
});
