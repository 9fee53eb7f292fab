import { describe, expect, it } from "vitest";
import { aiMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { humanMessage } from "../../src/messages";
import { ScriptedModel } from "../../src/testing";
import { createModelLengthFinishReasonMiddleware } from "../../src/middlewares/model-length-finish-reason";
import { callAI, leadRuntime, leadState } from "./_fixtures-lead";

describe("ModelLengthFinishReasonMiddleware", () => {
  const mw = createModelLengthFinishReasonMiddleware();
  it.each([
    [{ finish_reason: "length" }],
    [{ stop_reason: "max_tokens" }],
    [{ finish_reason: "MAX_TOKENS" }],
  ])("marks model_length_capped for %j without changing content", async (meta) => {
    const rt = leadRuntime();
    const st = leadState([aiMessage("partial answer", { response_metadata: meta })]);
    expect(await mw.afterModel!(st, rt)).toBeUndefined();
    expect(rt.outcome.stopReason).toBe("model_length_capped");
  });
  it("ignores tool intent, empty content, normal stops, and keeps an earlier stop reason", async () => {
    const rt = leadRuntime();
    await mw.afterModel!(leadState([callAI([{ name: "x" }], { response_metadata: { finish_reason: "length" } })]), rt);
    await mw.afterModel!(leadState([aiMessage("", { response_metadata: { finish_reason: "length" } })]), rt);
    await mw.afterModel!(leadState([aiMessage("ok", { response_metadata: { finish_reason: "stop" } })]), rt);
    expect(rt.outcome.stopReason).toBeNull();
    const rt2 = leadRuntime();
    rt2.outcome.setStopReason("loop_capped");
    await mw.afterModel!(leadState([aiMessage("x", { response_metadata: { finish_reason: "length" } })]), rt2);
    expect(rt2.outcome.stopReason).toBe("loop_capped");
  });
  it("full run: a length-capped final answer keeps its content", async () => {
    const model = new ScriptedModel([{ text: "truncated...", finishReason: "length" }]);
    const agent = createAgent({ model, middleware: [mw] });
    const res = await agent.invoke({ messages: [humanMessage("q")] }, { threadId: "ml1" });
    expect(res.state.messages.at(-1)!.content).toBe("truncated...");
  });
});
