import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage, systemMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { createDynamicContextMiddleware } from "../../src/middlewares/dynamic-context";
import { createSystemMessageCoalescingMiddleware } from "../../src/middlewares/system-message-coalescing";
import { leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

const rem = (d: string) => systemMessage(`<system-reminder>\n<current_date>${d}</current_date>\n</system-reminder>`, { additional_kwargs: { dynamic_context_reminder: true, reminder_date: d } });

describe("SystemMessageCoalescingMiddleware", () => {
  const mw = createSystemMessageCoalescingMiddleware();
  it("passes requests without in-message system messages through untouched", async () => {
    const st = leadState([humanMessage("x")]);
    const { seen, req } = await wrapModel(mw, st, leadRuntime(), { systemPrompt: "SYS" });
    expect(seen[0]).toBe(req);
  });
  it("merges prompt + system messages into one leading prompt; only the latest date reminder survives", async () => {
    const st = leadState([rem("D1"), humanMessage("a"), aiMessage("b"), systemMessage("other"), rem("D2"), humanMessage("c")]);
    const { seen } = await wrapModel(mw, st, leadRuntime(), { systemPrompt: "SYS" });
    expect(seen[0].systemPrompt).toBe("SYS\n\nother\n\n<system-reminder>\n<current_date>D2</current_date>\n</system-reminder>");
    expect(seen[0].messages.map((m) => m.type)).toEqual(["human", "ai", "human"]);
    expect(st.messages).toHaveLength(6);
  });
  it("full run with DynamicContext: the model receives exactly one leading system message", async () => {
    const model = new ScriptedModel(["ok"]);
    const agent = createAgent({ model, systemPrompt: "SYS", middleware: [createDynamicContextMiddleware({ now: () => new Date(2026, 0, 1) }), createSystemMessageCoalescingMiddleware()] });
    const res = await agent.invoke({ messages: [humanMessage("hi")] }, { threadId: "smc1" });
    const msgs = model.requests[0].messages;
    expect(msgs.map((m) => m.type)).toEqual(["system", "human"]);
    expect(msgs[0].content).toBe("SYS\n\n<system-reminder>\n<current_date>2026-01-01, Thursday</current_date>\n</system-reminder>");
    expect(res.state.messages[0].type).toBe("system");
  });
});
