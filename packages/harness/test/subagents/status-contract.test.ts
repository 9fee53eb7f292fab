import { describe, expect, it } from "vitest";
import {
  extractDelegations,
  formatSubagentResultMessage,
  makeSubagentAdditionalKwargs,
  normalizeTokenUsage,
  readSubagentResultMetadata,
  renderDelegationLedger,
} from "../../src/subagents";
import { aiMessage, toolMessage } from "../../src/messages";

describe("sub-agent result contract", () => {
  it("formats the model-visible text per status", () => {
    expect(formatSubagentResultMessage("completed", { result: "R" })).toBe("Task Succeeded. Result: R");
    expect(formatSubagentResultMessage("completed", { result: "R", stopReason: "token_capped" })).toBe("Task Succeeded (capped: token budget). Result: R");
    expect(formatSubagentResultMessage("failed", { error: "boom" })).toBe("Task failed. Error: boom");
    expect(formatSubagentResultMessage("failed", {})).toBe("Task failed.");
    expect(formatSubagentResultMessage("failed", { error: "x", stopReason: "loop_capped" })).toBe("Task failed (capped: repeated tool-call loop). Error: x");
    expect(formatSubagentResultMessage("cancelled", {})).toBe("Task cancelled by user.");
    expect(formatSubagentResultMessage("cancelled", { error: "Cancelled by user" })).toBe("Task cancelled by user. Error: Cancelled by user");
    expect(formatSubagentResultMessage("timed_out", {})).toBe("Task timed out.");
    expect(formatSubagentResultMessage("polling_timed_out", {})).toBe("Task polling timed out.");
  });

  it("stamps metadata: brief+digest only when completed, error otherwise, usage validated", () => {
    const long = `${"a".repeat(3000)}END`;
    const k = makeSubagentAdditionalKwargs("completed", { result: long, modelName: " m ", tokenUsage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 }, error: "ignored" });
    expect((k.subagent_result_brief as string).length).toBe(2000);
    expect(k.subagent_result_brief as string).toContain("\n...\n");
    expect((k.subagent_result_brief as string).endsWith("END")).toBe(true);
    expect(k.subagent_result_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(k.subagent_model_name).toBe("m");
    expect(k.subagent_error).toBeUndefined();
    const f = makeSubagentAdditionalKwargs("failed", { error: "bad", result: "r", tokenUsage: { input_tokens: true, output_tokens: 0, total_tokens: 0 } });
    expect(f).toEqual({ subagent_status: "failed", subagent_error: "bad" });
    expect(() => makeSubagentAdditionalKwargs("weird" as never)).toThrow(/invalid subagent status/);
    expect(normalizeTokenUsage({ input_tokens: -1, output_tokens: 0, total_tokens: 0 })).toBeNull();
  });

  it("reads metadata back, mapping legacy max_turns_reached to turn_capped", () => {
    expect(readSubagentResultMetadata({ subagent_status: "max_turns_reached", subagent_result_brief: "partial" })).toEqual({
      status: "completed",
      resultBrief: "partial",
      stopReason: "turn_capped",
    });
    expect(readSubagentResultMetadata({ subagent_status: "max_turns_reached" })).toEqual({ status: "failed", stopReason: "turn_capped" });
    expect(readSubagentResultMetadata({ subagent_status: "completed", subagent_result_brief: "x", subagent_result_sha256: "FORGED" })).toEqual({ status: "completed", resultBrief: "x" });
    expect(readSubagentResultMetadata({ subagent_status: "nope" })).toBeNull();
  });
});

describe("delegation ledger", () => {
  it("extracts in-progress entries and upgrades them from terminal metadata", () => {
    const ai = aiMessage("", { tool_calls: [{ id: "a", name: "task", args: { description: "find x", subagent_type: "researcher", prompt: "p" } }, { id: "b", name: "task", args: { prompt: "only prompt" } }] });
    const done = toolMessage("Task failed. Error: e", { tool_call_id: "a", name: "task", additional_kwargs: makeSubagentAdditionalKwargs("failed", { error: "e" }) });
    const entries = extractDelegations([ai, done], "2026-01-01T00:00:00Z");
    expect(entries).toEqual([
      { id: "a", description: "find x", subagent_type: "researcher", status: "failed", created_at: "2026-01-01T00:00:00Z", result_brief: "e", result_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), result_ref: done.id },
      { id: "b", description: "only prompt", subagent_type: "", status: "in_progress", created_at: "2026-01-01T00:00:00Z" },
    ]);
    const text = renderDelegationLedger(entries);
    expect(text.split("\n").slice(2)).toEqual([
      "- [in_progress] only prompt (via ; already delegated; do NOT delegate again; wait for or build on the result)",
      "- [failed] find x (via researcher; failed attempt; may retry with a changed plan) -> e",
    ]);
  });

  it("drops the oldest entries beyond the budget with an omitted line, and escapes markup", () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({ id: `e${i}`, description: `<b>task ${i}</b> ${"d".repeat(150)}`, subagent_type: "general-purpose", status: "completed", created_at: "t", stop_reason: i === 39 ? "turn_capped" : null }));
    const text = renderDelegationLedger(entries, 2000);
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text).toMatch(/- \.\.\. \d+ older delegation entries omitted from this model view because of context budget$/);
    expect(text).toContain("&lt;b&gt;task 39&lt;/b&gt;");
    expect(text).toContain("hit a guardrail cap with a partial result; reuse the partial result, retry with a tighter scope, or raise the per-agent budget (max_turns / token_budget)");
    expect(text).not.toContain("task 0<");
  });
});
