import { describe, expect, it } from "vitest";
import { contentText } from "../../src/messages";
import type { AIMessage } from "../../src/messages";
import { createSubagentLimitMiddleware, SUBAGENT_LIMIT_REACHED_MESSAGE } from "../../src/middlewares/subagent-limit";
import { apply, callAI, leadRuntime, leadState } from "./_fixtures-lead";

const tasks = (n: number, extra: Array<{ name: string }> = []) => callAI([...Array.from({ length: n }, (_, i) => ({ name: "task", id: `t${i}` })), ...extra.map((e, i) => ({ ...e, id: `o${i}` }))]);

describe("SubagentLimitMiddleware", () => {
  it("validates and clamps options", () => {
    expect(() => createSubagentLimitMiddleware({ max_concurrent: "3" } as never)).toThrow(/SubagentLimitMiddleware: invalid option 'max_concurrent'/);
    expect(() => createSubagentLimitMiddleware({ bogus: 1 } as never)).toThrow(/SubagentLimitMiddleware/);
    const mw = createSubagentLimitMiddleware({ max_concurrent: 99 });
    const out = mw.afterModel!(leadState([tasks(6)]), leadRuntime()) as { messages: AIMessage[] };
    expect(out.messages[0].tool_calls).toHaveLength(4); // clamped to 4
  });

  it("keeps min(max_concurrent, remaining) task calls, other tools untouched, raw calls synced", () => {
    const mw = createSubagentLimitMiddleware({ max_concurrent: 3, max_total: 6 });
    const ai = tasks(5, [{ name: "read_file" }]);
    const withRaw = { ...ai, additional_kwargs: { tool_calls: ai.tool_calls.map((c) => ({ id: c.id, type: "function" })) } };
    const out = mw.afterModel!(leadState([withRaw]), leadRuntime()) as { messages: AIMessage[] };
    expect(out.messages[0].id).toBe(ai.id);
    expect(out.messages[0].tool_calls.map((c) => c.id)).toEqual(["t0", "t1", "t2", "o0"]);
    expect((out.messages[0].additional_kwargs.tool_calls as Array<{ id: string }>).map((c) => c.id)).toEqual(["t0", "t1", "t2", "o0"]);
    expect(contentText(out.messages[0].content)).toBe("");
    // within the limit: nothing to do
    expect(mw.afterModel!(leadState([tasks(3)]), leadRuntime())).toBeUndefined();
  });

  it("counts only this run's ledger entries and appends the limit note when the run's budget is gone", () => {
    const mw = createSubagentLimitMiddleware({ max_concurrent: 3, max_total: 2 });
    const ledger = (run: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${run}-${i}`, run_id: run, description: "", subagent_type: "x", status: "completed", created_at: "t" }));
    // another run's delegations do not count
    expect(mw.afterModel!(leadState([tasks(2)], { delegations: ledger("older", 5) }), leadRuntime({ runId: "r1" }))).toBeUndefined();
    const one = mw.afterModel!(leadState([tasks(2)], { delegations: ledger("r1", 1) }), leadRuntime({ runId: "r1" })) as { messages: AIMessage[] };
    expect(one.messages[0].tool_calls).toHaveLength(1);
    const rt = leadRuntime({ runId: "r1" });
    const ai = { ...tasks(2), response_metadata: { finish_reason: "tool_calls" } };
    const state = leadState([ai], { delegations: ledger("r1", 2) });
    const capped = apply(state, mw.afterModel!(state, rt) as never);
    const last = capped.messages[0] as AIMessage;
    expect(last.tool_calls).toEqual([]);
    expect(contentText(last.content)).toBe(SUBAGENT_LIMIT_REACHED_MESSAGE);
    expect(last.response_metadata.finish_reason).toBe("stop");
    expect(rt.outcome.stopReason).toBe("subagent_limit_capped");
  });
});
