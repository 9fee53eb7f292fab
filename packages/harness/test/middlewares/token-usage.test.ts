import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage, toolMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { z } from "zod";
import { createTokenUsageMiddleware } from "../../src/middlewares/token-usage";
import { apply, callAI, leadRuntime, leadState } from "./_fixtures-lead";

describe("TokenUsageMiddleware", () => {
  it("leaves the run totals to the runtime: it reports no usage of its own", async () => {
    const mw = createTokenUsageMiddleware();
    const rt = leadRuntime();
    const a = aiMessage("hi", { id: "a", usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
    await mw.afterModel!(leadState([humanMessage("q"), a]), rt);
    expect(rt.outcome.snapshot().usage.total_tokens).toBe(0);
    expect(rt.context.token_usage).toBeUndefined();
  });

  it("stamps step attribution (todo actions, subagent dispatch, final answer)", async () => {
    const mw = createTokenUsageMiddleware();
    const rt = leadRuntime();
    const todoCall = callAI([{ name: "write_todos", id: "w", args: { todos: [{ content: "A", status: "completed" }, { content: "B", status: "in_progress" }] } }]);
    const st = leadState([todoCall], { todos: [{ content: "A", status: "in_progress" }, { content: "B", status: "pending" }] });
    const out = apply(st, await mw.afterModel!(st, rt));
    const attr = (out.messages.at(-1) as any).additional_kwargs.token_usage_attribution;
    expect(attr).toMatchObject({ version: 1, kind: "tool_batch", shared_attribution: true, tool_call_ids: ["w"] });
    expect(attr.actions.map((a: any) => a.kind)).toEqual(["todo_complete", "todo_start"]);
    const fin = leadState([aiMessage("done")]);
    expect((apply(fin, await mw.afterModel!(fin, rt)).messages[0] as any).additional_kwargs.token_usage_attribution.kind).toBe("final_answer");
    const task = leadState([callAI([{ name: "task", id: "t", args: { description: "d", subagent_type: "general-purpose" } }])]);
    expect((apply(task, await mw.afterModel!(task, rt)).messages[0] as any).additional_kwargs.token_usage_attribution.kind).toBe("subagent_dispatch");
  });

  it("merges subagent usage into the dispatching AI message exactly once", async () => {
    const mw = createTokenUsageMiddleware();
    const rt = leadRuntime();
    const dispatch = callAI([{ name: "task", id: "t1" }], { id: "d", usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } });
    const result = toolMessage("ok", { tool_call_id: "t1", additional_kwargs: { subagent_token_usage: { input_tokens: 100, output_tokens: 50, total_tokens: 150 } } });
    let st = leadState([humanMessage("q"), dispatch, result, aiMessage("final", { id: "f" })]);
    st = apply(st, await mw.afterModel!(st, rt));
    expect((st.messages[1] as any).usage_metadata).toMatchObject({ input_tokens: 101, output_tokens: 51, total_tokens: 152 });
    expect(st.messages[2].additional_kwargs.subagent_token_usage_attributed).toBe(true);
    st = apply(st, await mw.afterModel!(st, rt));
    expect((st.messages[1] as any).usage_metadata.total_tokens).toBe(152);
  });

  it("full run: the run outcome adds up the model's reported usage, with or without this middleware", async () => {
    for (const middleware of [[createTokenUsageMiddleware()], []]) {
      const model = new ScriptedModel([{ toolCalls: [{ name: "n", args: {} }], usage: { input_tokens: 5, output_tokens: 2 } }, { text: "done", usage: { input_tokens: 7, output_tokens: 3 } }]);
      const n = tool({ name: "n", description: "n", schema: z.object({}), execute: () => "x" });
      const agent = createAgent({ model, tools: [n], middleware });
      const r = await agent.invoke({ messages: [humanMessage("q")] }, { threadId: `tu${middleware.length}` });
      expect(r.outcome.usage).toEqual({ input_tokens: 12, output_tokens: 5, total_tokens: 17, llm_call_count: 2 });
      expect(r.outcome.usageByCaller).toEqual({ lead_agent: { input_tokens: 12, output_tokens: 5, total_tokens: 17, calls: 2 } });
    }
  });
});
