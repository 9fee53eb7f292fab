import { describe, expect, it } from "vitest";
import { aiMessage, contentText, humanMessage, systemMessage, toolMessage } from "../../src/messages";
import { createDurableContextMiddleware } from "../../src/middlewares/durable-context";
import { makeSubagentAdditionalKwargs } from "../../src/subagents";
import { apply, leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

const call = (id: string, description: string) => aiMessage("", { tool_calls: [{ id, name: "task", args: { description, prompt: "p", subagent_type: "coder" } }] });

describe("DurableContextMiddleware", () => {
  it("validates options", () => {
    expect(() => createDurableContextMiddleware({ ledger_max_chars: 0 })).toThrow(/DurableContextMiddleware: invalid option 'ledger_max_chars'/);
  });

  it("captures task calls as in-progress entries tagged with the run, upgrades them from results, never downgrades", () => {
    const mw = createDurableContextMiddleware();
    const rt = leadRuntime({ runId: "run-A" });
    let state = leadState([humanMessage("go"), call("c1", "write parser")]);
    state = apply(state, mw.afterModel!(state, rt) as never);
    expect(state.delegations).toMatchObject([{ id: "c1", status: "in_progress", run_id: "run-A", description: "write parser", subagent_type: "coder" }]);
    const result = toolMessage("Task Succeeded. Result: parser.py", { tool_call_id: "c1", name: "task", additional_kwargs: makeSubagentAdditionalKwargs("completed", { result: "parser.py" }) });
    state = apply(state, { messages: [result] });
    state = apply(state, mw.beforeModel!(state, leadRuntime({ runId: "run-B" })) as never);
    expect(state.delegations).toMatchObject([{ id: "c1", status: "completed", run_id: "run-A", result_brief: "parser.py", result_ref: result.id }]);
    // nothing changed: no update
    expect(mw.beforeModel!(state, leadRuntime({ runId: "run-B" }))).toBeUndefined();
  });

  it("writes nothing while the thread holds no task call, whatever the ledger already holds", () => {
    const mw = createDurableContextMiddleware();
    const plain = [humanMessage("go"), aiMessage("", { tool_calls: [{ id: "b1", name: "bash", args: { command: "ls" } }] }), toolMessage("ok", { tool_call_id: "b1", name: "bash" })];
    expect(mw.beforeModel!(leadState(plain), leadRuntime({ runId: "run-A" }))).toBeUndefined();
    const kept = leadState(plain, { delegations: [{ id: "old", description: "earlier", subagent_type: "coder", status: "completed", created_at: "2026-01-01T00:00:00.000Z", run_id: "run-0" }] });
    expect(mw.afterModel!(kept, leadRuntime({ runId: "run-A" }))).toBeUndefined();
    // An id-less task call makes no entry either.
    const idless = leadState([humanMessage("go"), aiMessage("", { tool_calls: [{ id: "", name: "task", args: { description: "d" } }] })]);
    expect(mw.afterModel!(idless, leadRuntime({ runId: "run-A" }))).toBeUndefined();
  });

  it("injects the ledger after the leading system messages, on the request only", async () => {
    const mw = createDurableContextMiddleware();
    const state = leadState([systemMessage("sys"), humanMessage("go")], {
      delegations: [{ id: "c1", description: "write parser", subagent_type: "coder", status: "in_progress", created_at: "t" }],
    });
    const { seen } = await wrapModel(mw, state, leadRuntime());
    const msgs = seen[0].messages;
    expect(msgs.map((m) => m.type)).toEqual(["system", "system", "human", "human"]);
    expect(contentText(msgs[1].content)).toMatch(/^## Durable context authority contract/);
    expect(msgs[2].additional_kwargs).toMatchObject({ hide_from_ui: true, durable_context_data: true });
    expect(contentText(msgs[2].content)).toBe(
      "<durable_context_data>\n## Work already delegated\nNewest entries are shown first. In-progress entries are already delegated. Completed entries are reusable results. Failed, cancelled, or timed-out entries are prior attempts.\n- [in_progress] write parser (via coder; already delegated; do NOT delegate again; wait for or build on the result)\n</durable_context_data>",
    );
    expect(state.messages).toHaveLength(2);
    // empty ledger: request unchanged
    const empty = await wrapModel(mw, leadState([humanMessage("x")]), leadRuntime());
    expect(empty.seen[0].messages).toHaveLength(1);
  });

  it("does not re-add task calls that fell out of a full ledger as new entries of this run", () => {
    const mw = createDurableContextMiddleware();
    const old = Array.from({ length: 60 }, (_, i) => call(`c${i}`, `t${i}`));
    const ledger = Array.from({ length: 50 }, (_, i) => ({ id: `c${i + 10}`, run_id: "old", description: `t${i + 10}`, subagent_type: "coder", status: "in_progress", created_at: "t" }));
    const state = leadState(old, { delegations: ledger });
    expect(mw.afterModel!(state, leadRuntime({ runId: "new" }))).toBeUndefined();
  });
});
