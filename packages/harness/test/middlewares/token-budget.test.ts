import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { aiMessage, humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { z } from "zod";
import { createTokenBudgetMiddleware } from "../../src/middlewares/token-budget";
import { callAI, leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

const usage = (i: number, o: number) => ({ input_tokens: i, output_tokens: o, total_tokens: i + o });

describe("TokenBudgetMiddleware", () => {
  it("is off by default and validates options", async () => {
    const mw = createTokenBudgetMiddleware();
    const st = leadState([callAI([{ name: "x" }], { usage_metadata: usage(10_000_000, 1) })]);
    expect(await mw.afterModel!(st, leadRuntime())).toBeUndefined();
    expect(() => createTokenBudgetMiddleware({ max_tokens: 0 })).toThrow(ConfigError);
    expect(() => createTokenBudgetMiddleware({ warn_threshold: 0.9, hard_stop_threshold: 0.5 })).toThrow(/hard_stop_threshold/);
  });

  it("ignores usage from before the run, warns at 80% once, hard-stops at 100%", async () => {
    const mw = createTokenBudgetMiddleware({ enabled: true, max_tokens: 1000 });
    const rt = leadRuntime();
    const old = aiMessage("old", { id: "old", usage_metadata: usage(5000, 5000) });
    const base = [humanMessage("hi"), old];
    await mw.beforeAgent!(leadState(base), rt);
    const a1 = callAI([{ name: "x" }], { id: "a1", usage_metadata: usage(700, 100) });
    expect(await mw.afterModel!(leadState([...base, a1]), rt)).toBeUndefined();
    const w = await wrapModel(mw, leadState([]), rt);
    expect(w.seen[0].messages[0].name).toBe("budget_warning");
    expect(w.seen[0].messages[0].content).toBe(
      "[TOKEN BUDGET WARNING] You have used 800 of your 1,000 total token budget (80%). Wrap up your current work and produce a final answer. Avoid starting new tool calls unless absolutely necessary.",
    );
    expect((await wrapModel(mw, leadState([]), rt)).seen[0].messages).toHaveLength(0);
    const a2 = callAI([{ name: "x" }], { id: "a2", usage_metadata: usage(150, 60), response_metadata: { finish_reason: "tool_calls" } });
    const res = (await mw.afterModel!(leadState([...base, a1, a2]), rt)) as { messages: any[] };
    expect(res.messages[0].tool_calls).toEqual([]);
    expect(res.messages[0].response_metadata.finish_reason).toBe("stop");
    expect(res.messages[0].content).toBe(
      "\n\n[TOKEN BUDGET EXCEEDED] The total token usage (1,010) has exceeded the safety limit (1,000). Producing final answer with results collected so far.".trimStart(),
    );
    expect(rt.outcome.stopReason).toBe("token_capped");
  });

  it("uses the highest of total/input/output fractions", async () => {
    const mw = createTokenBudgetMiddleware({ enabled: true, max_tokens: 100000, max_output_tokens: 100 });
    const rt = leadRuntime();
    const res = (await mw.afterModel!(leadState([aiMessage("t", { id: "a", usage_metadata: usage(10, 120) })]), rt)) as { messages: any[] };
    expect(res.messages[0].content).toContain("The output token usage (120)");
  });

  it("full run: hard stop strips the tool call and the run ends", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "noop", args: {} }], usage: { input_tokens: 900, output_tokens: 200 } }, "never"]);
    const noop = tool({ name: "noop", description: "n", schema: z.object({}), execute: () => "done" });
    const agent = createAgent({ model, tools: [noop], middleware: [createTokenBudgetMiddleware({ enabled: true, max_tokens: 1000 })] });
    const res = await agent.invoke({ messages: [humanMessage("x")] }, { threadId: "tb1" });
    expect(model.callCount).toBe(1);
    expect(String(res.state.messages.at(-1)!.content)).toContain("[TOKEN BUDGET EXCEEDED]");
    expect(res.state.messages.some((m) => m.type === "tool")).toBe(false);
  });
});
