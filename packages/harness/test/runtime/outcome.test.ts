import { describe, expect, it } from "vitest";
import { AGENT_CALLER, callerTokens, createRunOutcomeRecorder } from "../../src/runtime/outcome";

describe("createRunOutcomeRecorder", () => {
  it("keeps the first stop reason and error unless told to overwrite", () => {
    const r = createRunOutcomeRecorder();
    r.setStopReason("loop_capped");
    r.setStopReason("token_capped");
    expect(r.stopReason).toBe("loop_capped");
    r.setStopReason("safety_capped", { overwrite: true });
    expect(r.stopReason).toBe("safety_capped");
    r.setError({ type: "a", reason: "first" });
    r.setError({ type: "b", reason: "second" });
    expect(r.error).toEqual({ type: "a", reason: "first" });
  });

  it("adds usage per caller; only the agent's calls count as LLM calls; bad figures count as 0", () => {
    const r = createRunOutcomeRecorder();
    r.recordUsage(AGENT_CALLER, { input_tokens: 10, output_tokens: 5 });
    r.recordUsage(AGENT_CALLER, { input_tokens: 1, output_tokens: 1, total_tokens: 3 });
    r.recordUsage("subagent:general-purpose", { total_tokens: 40 }, { calls: 2 });
    r.recordUsage("middleware:title", { input_tokens: Number.NaN, output_tokens: -4 });
    const o = r.snapshot();
    expect(o.usage).toEqual({ input_tokens: 11, output_tokens: 6, total_tokens: 58, llm_call_count: 2 });
    expect(o.usageByCaller[AGENT_CALLER]).toEqual({ input_tokens: 11, output_tokens: 6, total_tokens: 18, calls: 2 });
    expect(o.usageByCaller["subagent:general-purpose"]?.calls).toBe(2);
    expect(o.usageByCaller["middleware:title"]).toEqual({ input_tokens: 0, output_tokens: 0, total_tokens: 0, calls: 1 });
    expect(callerTokens(o, "subagent")).toBe(40);
  });

  it("hands out snapshots that later reports do not change, and recorders that share nothing", () => {
    const a = createRunOutcomeRecorder();
    const b = createRunOutcomeRecorder();
    a.report("memory", { injected: 2 });
    a.recordUsage(AGENT_CALLER, { total_tokens: 7 });
    const before = a.snapshot();
    a.report("memory", { injected: 3 });
    a.recordUsage(AGENT_CALLER, { total_tokens: 1 });
    expect(before.reports).toEqual({ memory: { injected: 2 } });
    expect(before.usage.total_tokens).toBe(7);
    expect(b.snapshot()).toEqual({ stopReason: null, usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, llm_call_count: 0 }, usageByCaller: {}, error: null, reports: {} });
  });
});
