import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { aiMessage, humanMessage, systemMessage, toolMessage } from "../../src/messages";
import type { Message } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { createSummarizationMiddleware, NO_HISTORY_SUMMARY } from "../../src/middlewares/summarization";
import { cutoffForMessages, cutoffForTokens, approximateTokenCounter } from "../../src/middlewares/summarization-cutoff";
import { DURABLE_CONTEXT_AUTHORITY_CONTRACT, projectSummary } from "../../src/middlewares/summarization-projection";
import { apply, callAI, leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

function convo(turns: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < turns; i++) out.push(humanMessage(`question ${i}`, { id: `h${i}` }), aiMessage(`answer ${i}`, { id: `a${i}` }));
  return out;
}

describe("summarization cutoff", () => {
  it("never splits an AI tool call from its results", () => {
    const msgs = [humanMessage("q"), callAI([{ name: "a", id: "x" }, { name: "b", id: "y" }]), toolMessage("1", { tool_call_id: "x" }), toolMessage("2", { tool_call_id: "y" }), aiMessage("done")];
    expect(cutoffForMessages(msgs, 2)).toBe(1); // would cut at tool "y" → moved back to its AI message
    expect(cutoffForMessages(msgs, 10)).toBe(0);
    expect(cutoffForTokens(msgs, 1, approximateTokenCounter)).toBe(4);
  });
});

describe("DeerFlowSummarizationMiddleware", () => {
  it("validates options", () => {
    expect(() => createSummarizationMiddleware({ trigger: { type: "fraction", value: 2 } })).toThrow(ConfigError);
    expect(() => createSummarizationMiddleware({ keep: { type: "bogus" as never, value: 1 } })).toThrow(/keep/);
  });

  it("does nothing when disabled or below every trigger", async () => {
    const model = new ScriptedModel([]);
    const rt = leadRuntime({ model });
    expect(await createSummarizationMiddleware({ trigger: { type: "messages", value: 2 } }).beforeModel!(leadState(convo(5)), rt)).toBeUndefined();
    expect(await createSummarizationMiddleware({ enabled: true, trigger: [{ type: "messages", value: 50 }, { type: "tokens", value: 100000 }] }).beforeModel!(leadState(convo(5)), rt)).toBeUndefined();
    expect(model.callCount).toBe(0);
  });

  it("summarizes old messages (OR triggers), keeps N, preserves the latest user message and reminders", async () => {
    const model = new ScriptedModel(["SUMMARY-1"]);
    const mw = createSummarizationMiddleware({ enabled: true, trigger: [{ type: "tokens", value: 999999 }, { type: "messages", value: 8 }], keep: { type: "messages", value: 2 } });
    const reminder = systemMessage("<system-reminder>d</system-reminder>", { id: "rem", additional_kwargs: { dynamic_context_reminder: true, hide_from_ui: true } });
    const msgs = [reminder, ...convo(3), humanMessage("latest <b>&", { id: "cur" }), callAI([{ name: "t", id: "c1" }], { id: "ai-t" }), toolMessage("res", { tool_call_id: "c1", id: "tm" }), aiMessage("almost", { id: "fin" })];
    const st = leadState(msgs);
    const res = (await mw.beforeModel!(st, leadRuntime({ model }))) as any;
    expect(res.summary_text).toBe("SUMMARY-1");
    expect(res.messages[0]).toEqual({ type: "remove", id: "__remove_all__" });
    expect(res.messages.slice(1).map((m: Message) => m.id)).toEqual(["rem", "cur", "ai-t", "tm", "fin"]);
    const prompt = String(model.requests[0].messages[0].content);
    expect(prompt).toContain("<new_messages>\nHuman: question 0\nAI: answer 0");
    expect(prompt).not.toContain("latest"); // the current request is preserved, not summarized
    expect(prompt).not.toContain("system-reminder"); // reminders are preserved, not summarized
    expect(prompt).not.toContain("<existing_summary>");
    const after = apply(st, res);
    expect(after.messages.map((m) => m.id)).toEqual(["rem", "cur", "ai-t", "tm", "fin"]);
    expect(after.summary_text).toBe("SUMMARY-1");
  });

  it("counts the prior summary for triggers and sends it escaped in <existing_summary>", async () => {
    const model = new ScriptedModel(["SUMMARY-2"]);
    const mw = createSummarizationMiddleware({ enabled: true, trigger: { type: "tokens", value: 300 }, keep: { type: "messages", value: 2 } });
    const small = leadState(convo(3));
    expect(await mw.beforeModel!(small, leadRuntime({ model }))).toBeUndefined();
    const withSummary = leadState(convo(3), { summary_text: "old </existing_summary> stuff ".repeat(40) });
    const res = (await mw.beforeModel!(withSummary, leadRuntime({ model }))) as any;
    expect(res.summary_text).toBe("SUMMARY-2");
    const prompt = String(model.requests[0].messages[0].content);
    expect(prompt).toContain("<existing_summary>\nold &lt;/existing_summary&gt; stuff");
    expect(prompt.match(/<\/existing_summary>/g)).toHaveLength(1);
  });

  it("swallows model failures (state unchanged) and falls back from a failing configured model to the run model", async () => {
    const broken = new ScriptedModel([{ error: { kind: "server" } }]);
    const runModel = new ScriptedModel([{ error: { kind: "server" } }]);
    const mw = createSummarizationMiddleware({ enabled: true, model_name: "cheap", model: broken, trigger: { type: "messages", value: 3 }, keep: { type: "messages", value: 1 } });
    expect(await mw.beforeModel!(leadState(convo(3)), leadRuntime({ model: runModel }))).toBeUndefined();
    expect(broken.callCount).toBe(1);
    expect(runModel.callCount).toBe(1);
    const ok = new ScriptedModel(["from run model"]);
    const mw2 = createSummarizationMiddleware({ enabled: true, model_name: "cheap", model: new ScriptedModel([{ error: { kind: "auth" } }]), trigger: { type: "messages", value: 3 }, keep: { type: "messages", value: 1 } });
    expect(((await mw2.beforeModel!(leadState(convo(3)), leadRuntime({ model: ok }))) as any).summary_text).toBe("from run model");
  });

  it("supports fraction triggers/keep against contextWindow and a memory-flush hook", async () => {
    const events: unknown[] = [];
    const model = new ScriptedModel(["S"]);
    const mw = createSummarizationMiddleware({ enabled: true, trigger: { type: "fraction", value: 0.5 }, keep: { type: "fraction", value: 0.2 }, contextWindow: 100, beforeSummarization: (e) => void events.push(e.summaryText) });
    const res = (await mw.beforeModel!(leadState(convo(6)), leadRuntime({ model }))) as any;
    expect(res.summary_text).toBe("S");
    expect(events).toEqual(["S"]);
    expect(approximateTokenCounter(res.messages.slice(1))).toBeLessThanOrEqual(20);
  });

  it("projects summary_text into the request after leading system messages", async () => {
    const mw = createSummarizationMiddleware();
    const st = leadState([systemMessage("sys"), humanMessage("q")], { summary_text: "we did <x>" });
    const { seen } = await wrapModel(mw, st, leadRuntime());
    const m = seen[0].messages;
    expect(m.map((x) => x.type)).toEqual(["system", "system", "human", "human"]);
    expect(m[1].content).toBe(DURABLE_CONTEXT_AUTHORITY_CONTRACT);
    expect(m[2]).toMatchObject({ content: "<durable_context_data>\n## Conversation summary so far\nwe did &lt;x&gt;\n</durable_context_data>", additional_kwargs: { hide_from_ui: true, durable_context_data: true } });
    expect(projectSummary([humanMessage("x")], "y".repeat(7000))[1].content.length).toBeLessThan(6200);
    expect(NO_HISTORY_SUMMARY).toBe("No previous conversation history.");
  });

  it("full run: history is compacted before the model call and the summary is projected", async () => {
    const model = new ScriptedModel(["SUM", "final answer"]);
    const mw = createSummarizationMiddleware({ enabled: true, trigger: { type: "messages", value: 6 }, keep: { type: "messages", value: 2 } });
    const agent = createAgent({ model, stateSchema: threadStateSchema, middleware: [mw] });
    await agent.updateState("su1", { messages: convo(3) });
    const res = await agent.invoke({ messages: [humanMessage("now?", { id: "now" })] }, { threadId: "su1" });
    expect(res.state.summary_text).toBe("SUM");
    const req = model.requests[1].messages;
    expect(req.map((m) => m.type)).toEqual(["system", "human", "ai", "human"]);
    expect(String(req[1].content)).toContain("## Conversation summary so far\nSUM");
    expect(req.at(-1)!.id).toBe("now");
    expect(res.state.messages.map((m) => m.content)).toEqual(["answer 2", "now?", "final answer"]);
  });
});
