import { describe, expect, it } from "vitest";
import { applyStreamPart, emptyView } from "../src/stream/reducer";
import { groupMessages } from "../src/stream/groups";
import { cancelRunning, STOPPED_BEFORE_RESULT } from "../src/stream/subtasks";
import { buildRunContext } from "../src/stream/settings";
import type { StreamPart, ThreadView, WireMessage } from "../src/stream/types";

const custom = (data: Record<string, unknown>): StreamPart => ({ event: "custom", data });
const usage = (t: number) => ({ input_tokens: t - 1, output_tokens: 1, total_tokens: t });
const taskCall: WireMessage = { type: "ai", id: "a1", content: "", tool_calls: [{ id: "t1", name: "task", args: { description: "find sources", prompt: "p", subagent_type: "researcher" } }] };

function run(parts: StreamPart[], start: ThreadView = emptyView("T")): ThreadView {
  return parts.reduce((v, p) => applyStreamPart(v, p, 1000), start);
}

describe("sub-agent cards from task_* events", () => {
  it("tracks started → running steps (cumulative usage replaced) → completed; terminal is final", () => {
    const v = run([
      { event: "values", data: { messages: [taskCall] } },
      custom({ type: "task_started", task_id: "t1", description: "find sources", model_name: "m1" }),
      custom({ type: "task_running", task_id: "t1", message: { type: "ai", content: "searching", tool_calls: [{ name: "web_search", args: {} }] }, message_index: 1, total_messages: 1, usage: usage(10), model_name: "m1" }),
      custom({ type: "task_running", task_id: "t1", message: { type: "ai", content: "writing" }, message_index: 2, total_messages: 2, usage: usage(25), model_name: "m1" }),
      // a replayed older frame must not roll the card back
      custom({ type: "task_running", task_id: "t1", message: { type: "ai", content: "searching" }, message_index: 1, total_messages: 1, usage: usage(10), model_name: "m1" }),
    ]);
    const live = v.subtasks.t1;
    expect(live).toMatchObject({ status: "running", description: "find sources", modelName: "m1", usage: usage(25) });
    expect(live.steps).toEqual([
      { index: 1, text: "searching", tools: ["web_search"] },
      { index: 2, text: "writing", tools: [] },
    ]);
    const [assistant] = groupMessages(v, true);
    const step = (assistant as { parts: Array<{ kind: string; step?: { subtask?: unknown } }> }).parts.find((p) => p.kind === "tool")!.step!;
    expect(step.subtask).toMatchObject({ status: "running", subagentType: "researcher" });

    const done = run([custom({ type: "task_completed", task_id: "t1", result: "3 sources", usage: usage(30), model_name: "m1" }), custom({ type: "task_failed", task_id: "t1", error: "late" })], v);
    expect(done.subtasks.t1).toMatchObject({ status: "completed", result: "3 sources", usage: usage(30) });
    expect(done.subtasks.t1.error).toBeUndefined();
    // non-task custom events still reach the other handlers
    const retry = run([custom({ type: "llm_retry", attempt: 1, max_attempts: 3 })], done);
    expect(retry.notices).toHaveLength(1);
  });

  it("rebuilds cards from the task ToolMessage metadata after a reload", () => {
    const result: WireMessage = {
      type: "tool",
      id: "r1",
      tool_call_id: "t1",
      name: "task",
      content: "Task Succeeded (capped: turn budget). Result: partial list",
      additional_kwargs: { subagent_status: "completed", subagent_stop_reason: "turn_capped", subagent_model_name: "m2", subagent_token_usage: usage(40) },
    };
    const failed: WireMessage = { type: "tool", id: "r2", tool_call_id: "t2", name: "task", status: "error", content: "Task timed out. Error: Execution timed out after 9 seconds", additional_kwargs: { subagent_status: "timed_out", subagent_error: "Execution timed out after 9 seconds" } };
    const call2: WireMessage = { ...taskCall, id: "a2", tool_calls: [{ id: "t2", name: "task", args: { description: "slow one", prompt: "p", subagent_type: "coder" } }] };
    const items = groupMessages({ messages: [taskCall, result, call2, failed], timings: {} }, false);
    const cards = items.flatMap((i) => (i.kind === "assistant" ? i.parts : [])).map((p) => (p.kind === "tool" ? p.step.subtask : undefined));
    expect(cards[0]).toMatchObject({ status: "completed", result: "partial list", stopReason: "turn_capped", modelName: "m2", usage: usage(40), description: "find sources" });
    expect(cards[1]).toMatchObject({ status: "timed_out", error: "Execution timed out after 9 seconds", subagentType: "coder" });
  });

  it("a stopped run: running cards become cancelled and the turn is marked stopped, live and after a reload", () => {
    const live = run([
      { event: "values", data: { messages: [taskCall] } },
      custom({ type: "task_started", task_id: "t1", description: "find sources" }),
    ]);
    // Stop: the stream is gone before any task_cancelled frame, as ThreadController.stop leaves the view.
    const stopped: ThreadView = { ...live, phase: "cancelled", subtasks: cancelRunning(live.subtasks) };
    const items = groupMessages(stopped, false);
    const turn = items.find((i) => i.kind === "assistant");
    expect(turn).toMatchObject({ stopped: true });
    expect(turn?.kind === "assistant" && turn.parts[0].kind === "tool" && turn.parts[0].step.subtask).toMatchObject({ status: "cancelled", error: STOPPED_BEFORE_RESULT });
    // Reopened: the stored result the harness kept says "cancelled"…
    const cancelled: WireMessage = { type: "tool", id: "r1", tool_call_id: "t1", name: "task", status: "error", content: "Task cancelled by user.", additional_kwargs: { subagent_status: "cancelled" } };
    const reopened = groupMessages({ messages: [taskCall, cancelled], timings: {} }, false);
    expect(reopened[0]).toMatchObject({ kind: "assistant", stopped: true });
    expect(reopened[0].kind === "assistant" && reopened[0].parts[0].kind === "tool" && reopened[0].parts[0].step.subtask?.status).toBe("cancelled");
    // …and a call with no result at all (a thread from before) is cancelled too, never "failed".
    const bare = groupMessages({ messages: [taskCall], timings: {} }, false);
    expect(bare[0].kind === "assistant" && bare[0].parts[0].kind === "tool" && bare[0].parts[0].step.subtask?.status).toBe("cancelled");
    // While the run streams, a card without a result is running, and the turn is not marked.
    const streaming = groupMessages({ messages: [taskCall], timings: {} }, true);
    expect(streaming[0]).not.toMatchObject({ stopped: true });
    expect(streaming[0].kind === "assistant" && streaming[0].parts[0].kind === "tool" && streaming[0].parts[0].step.subtask?.status).toBe("running");
  });

  it("sends subagent_enabled and DeerFlow's ultra mode when the toggle is on", () => {
    const base = { thinking: true, planMode: false, reasoningEffort: "medium" as const };
    expect(buildRunContext(base, "T")).toMatchObject({ subagent_enabled: false, mode: "thinking" });
    expect(buildRunContext({ ...base, subagents: true }, "T")).toMatchObject({ subagent_enabled: true, mode: "ultra" });
  });
});
