import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage } from "../../src/messages";
import { runUsageFromMessages, runUsageFromOutcome } from "../../src/persistence";
import { createRunOutcomeRecorder } from "../../src/runtime";

describe("runUsageFromMessages", () => {
  it("counts only the run's own AI messages (fallback for a run without an outcome)", () => {
    const old = aiMessage("old", { id: "a0", usage_metadata: { input_tokens: 100, output_tokens: 100, total_tokens: 200 } });
    const h = humanMessage("q", { id: "h1" });
    const a1 = aiMessage("x", { id: "a1", usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } });
    const a2 = aiMessage("y", { id: "a2" });
    const u = runUsageFromMessages([old, h, a1, a2], new Set(["a0"]));
    expect(u).toMatchObject({ messageCount: 3, llmCallCount: 2, totalInputTokens: 3, totalOutputTokens: 4, totalTokens: 7, leadAgentTokens: 7 });
  });
});

describe("runUsageFromOutcome", () => {
  it("takes totals and the split by caller from the typed outcome", () => {
    const rec = createRunOutcomeRecorder();
    rec.recordUsage("lead_agent", { input_tokens: 10, output_tokens: 5 });
    rec.recordUsage("lead_agent", { input_tokens: 1, output_tokens: 1, total_tokens: 2 });
    rec.recordUsage("subagent:researcher", { input_tokens: 100, output_tokens: 20, total_tokens: 120 });
    rec.recordUsage("middleware:title", { input_tokens: 3, output_tokens: 1, total_tokens: 4 });
    const a1 = aiMessage("x", { id: "a1" });
    const u = runUsageFromOutcome(rec.snapshot(), [aiMessage("old", { id: "a0" }), a1], new Set(["a0"]));
    expect(u).toEqual({
      totalInputTokens: 114,
      totalOutputTokens: 27,
      totalTokens: 141,
      llmCallCount: 2,
      leadAgentTokens: 17,
      subagentTokens: 120,
      middlewareTokens: 4,
      messageCount: 1,
    });
  });
});
