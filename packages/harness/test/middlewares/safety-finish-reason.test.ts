import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { aiMessage, humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { z } from "zod";
import { createSafetyFinishReasonMiddleware } from "../../src/middlewares/safety-finish-reason";
import { callAI, leadRuntime, leadState } from "./_fixtures-lead";

describe("SafetyFinishReasonMiddleware", () => {
  it("strips tool calls on content_filter, sets safety_capped and emits safety_termination", async () => {
    const mw = createSafetyFinishReasonMiddleware();
    const rt = leadRuntime();
    const msg = callAI([{ name: "bash", args: { command: "x" } }, { name: "write_file" }], { response_metadata: { finish_reason: "content_filter" }, additional_kwargs: { tool_calls: [{}] } });
    const res = (await mw.afterModel!(leadState([msg]), rt)) as { messages: any[] };
    const out = res.messages[0];
    expect(out.tool_calls).toEqual([]);
    expect(out.additional_kwargs.tool_calls).toBeUndefined();
    expect(out.content).toBe(
      "The model provider stopped this response with a safety-related signal (finish_reason='content_filter', detector='openai_compatible_content_filter'). Any tool calls produced in this turn were suppressed because their arguments may be truncated and unsafe to execute. Please rephrase the request or ask for a narrower output.",
    );
    expect(out.additional_kwargs.safety_termination).toMatchObject({ suppressed_tool_call_count: 2, suppressed_tool_call_names: ["bash", "write_file"] });
    expect(rt.outcome.stopReason).toBe("safety_capped");
    expect(rt.events).toEqual([
      { type: "safety_termination", detector: "openai_compatible_content_filter", reason_field: "finish_reason", reason_value: "content_filter", suppressed_tool_call_count: 2, suppressed_tool_call_names: ["bash", "write_file"], thread_id: "t1" },
    ]);
  });

  it("detects Anthropic refusal and Gemini SAFETY; backfills empty answers; leaves text-only answers alone", async () => {
    const mw = createSafetyFinishReasonMiddleware();
    const r1 = (await mw.afterModel!(leadState([callAI([{ name: "x" }], { response_metadata: { stop_reason: "refusal" } })]), leadRuntime())) as any;
    expect(r1.messages[0].additional_kwargs.safety_termination.detector).toBe("anthropic_refusal");
    const r2 = (await mw.afterModel!(leadState([aiMessage("", { response_metadata: { finish_reason: "SAFETY" } })]), leadRuntime())) as any;
    expect(r2.messages[0].content).toContain("and returned no content");
    expect(await mw.afterModel!(leadState([aiMessage("partial", { response_metadata: { finish_reason: "content_filter" } })]), leadRuntime())).toBeUndefined();
    expect(await mw.afterModel!(leadState([callAI([{ name: "x" }], { response_metadata: { finish_reason: "tool_calls" } })]), leadRuntime())).toBeUndefined();
  });

  it("resolves DeerFlow detector class paths; rejects empty and unknown detectors", async () => {
    const mw = createSafetyFinishReasonMiddleware({
      detectors: [{ use: "deerflow.agents.middlewares.safety_termination_detectors:OpenAICompatibleContentFilterDetector", config: { finish_reasons: ["sensitive"] } }],
    });
    expect(await mw.afterModel!(leadState([callAI([{ name: "x" }], { response_metadata: { finish_reason: "content_filter" } })]), leadRuntime())).toBeUndefined();
    expect(await mw.afterModel!(leadState([callAI([{ name: "x" }], { response_metadata: { finish_reason: "sensitive" } })]), leadRuntime())).toBeDefined();
    expect(() => createSafetyFinishReasonMiddleware({ detectors: [] })).toThrow(ConfigError);
    expect(() => createSafetyFinishReasonMiddleware({ detectors: [{ use: "my.mod:Nope" }] })).toThrow(/unknown detector/);
  });

  it("full run: a safety-terminated tool turn never executes the tool", async () => {
    let ran = false;
    const danger = tool({ name: "danger", description: "d", schema: z.object({}), execute: () => ((ran = true), "x") });
    const model = new ScriptedModel([{ toolCalls: [{ name: "danger", args: {} }], finishReason: "content_filter" }]);
    const agent = createAgent({ model, tools: [danger], middleware: [createSafetyFinishReasonMiddleware()] });
    const events: unknown[] = [];
    const stream = agent.stream({ messages: [humanMessage("q")] }, { threadId: "sf1", streamMode: ["custom"] });
    for await (const ev of stream) events.push(ev.data);
    const res = await stream.result;
    expect(ran).toBe(false);
    expect(res.status).toBe("success");
    expect(events).toContainEqual(expect.objectContaining({ type: "safety_termination", thread_id: "sf1" }));
  });
});
