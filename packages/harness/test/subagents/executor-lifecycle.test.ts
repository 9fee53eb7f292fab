import { describe, expect, it } from "vitest";
import { contentText, humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import type { ChatModel, ModelRequest, ModelStreamPart } from "../../src/models";
import { SubagentAdmission } from "../../src/subagents";
import { childModel, collect, customEvents, delegate, leadHarness, toolMessages } from "./_fixtures";

/** A model that never answers and ignores its abort signal (a hung provider). */
class HungModel implements ChatModel {
  readonly provider = "hung";
  readonly modelName = "hung";
  calls = 0;
  async *stream(_r: ModelRequest): AsyncIterable<ModelStreamPart> {
    this.calls++;
    await new Promise(() => {});
  }
}

describe("SubagentExecutor lifecycle", () => {
  it("times out with cooperative cancel and reports timed_out (first terminal status wins)", async () => {
    const child = childModel((_task, turn) => (turn === 0 ? { text: "thinking", delayMs: 5000 } : "late"));
    const { agent } = leadHarness({
      lead: [delegate({ id: "slow", prompt: "slow", type: "quick" }), "ok"],
      child,
      subagents: { custom_agents: { quick: { description: "d", system_prompt: "be quick", timeout_seconds: 0.15 } } },
    });
    const t0 = Date.now();
    const stream = agent.stream({ messages: [humanMessage("go")] }, { threadId: "to-1" });
    const events = await collect(stream);
    const res = await stream.result;
    expect(Date.now() - t0).toBeLessThan(4000); // the child would answer after 5 s
    const [tm] = toolMessages(res.state.messages) as ToolMessage[];
    expect(contentText(tm.content)).toBe("Task timed out. Error: Execution timed out after 0.15 seconds");
    expect(tm.additional_kwargs.subagent_status).toBe("timed_out");
    const terminal = customEvents(events).filter((e) => e.type !== "task_started" && e.type !== "task_running");
    expect(terminal.map((e) => e.type)).toEqual(["task_timed_out"]);
    expect(terminal[0]).toMatchObject({ task_id: "slow", error: "Execution timed out after 0.15 seconds", model_name: "lead-model" });
  });

  it("does not hang the parent on a child that ignores its abort signal", async () => {
    const hung = new HungModel();
    const { agent } = leadHarness({
      lead: [delegate({ id: "h", prompt: "hang", type: "quick" }), "ok"],
      child: hung,
      subagents: { custom_agents: { quick: { description: "d", system_prompt: "p", timeout_seconds: 0.1 } } },
      stopGraceMs: 50,
    });
    const t0 = Date.now();
    const res = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "hang-1" });
    expect(Date.now() - t0).toBeLessThan(4000); // the child never answers
    expect(hung.calls).toBe(1);
    expect(contentText((toolMessages(res.state.messages)[0] as ToolMessage).content)).toMatch(/^Task timed out\./);
  });

  it("cancels children with the parent, stops their model calls and reports their usage once", async () => {
    const child = childModel((_t, turn) => (turn === 0 ? { text: "part", toolCalls: [{ name: "nap", args: {} }], usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } } : { text: "never", delayMs: 3000 }));
    const { tool } = await import("../../src/tools");
    const { z } = await import("zod");
    const nap = tool({ name: "nap", description: "nap", schema: z.object({}), execute: () => "rested" });
    const { agent } = leadHarness({ lead: [delegate({ id: "c1", prompt: "one" }, { id: "c2", prompt: "two" }), "unreachable"], child, parentTools: [nap] });
    const ac = new AbortController();
    const stream = agent.stream({ messages: [humanMessage("go")] }, { threadId: "cancel-1", signal: ac.signal });
    const seen: Array<Record<string, unknown>> = [];
    let running = 0;
    const it = stream[Symbol.asyncIterator]();
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      seen.push(value as never);
      if (value.mode === "custom" && value.ns.length === 0 && (value.data as { type: string }).type === "task_running" && ++running === 2) {
        setTimeout(() => ac.abort(), 30);
      }
    }
    const res = await stream.result;
    expect(res.status).toBe("cancelled");
    const cancelled = customEvents(seen as never).filter((e) => e.type === "task_cancelled");
    expect(cancelled.map((e) => e.task_id).sort()).toEqual(["c1", "c2"]);
    expect(cancelled[0]).toMatchObject({ error: "Cancelled by user", usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } });
    // each child's first call counted once, no second turn finished
    expect(res.outcome.usageByCaller["subagent:general-purpose"]).toEqual({ input_tokens: 14, output_tokens: 6, total_tokens: 20, calls: 2 });
    // turn 0 of each child, then at most the aborted turn 1 of each: nothing ran after the cancel
    expect(child.callCount).toBeGreaterThanOrEqual(2);
    expect(child.callCount).toBeLessThanOrEqual(4);
    await new Promise((r) => setTimeout(r, 100));
    expect(child.callCount).toBeLessThanOrEqual(4);
  });

  it("queues sub-agents beyond the process-wide admission limit (FIFO) without failing them", async () => {
    const admission = new SubagentAdmission(4);
    const child = childModel((task) => ({ text: `r ${task}`, delayMs: 60 }));
    const mk = (thread: string) =>
      leadHarness({ lead: [delegate(...["1", "2", "3"].map((i) => ({ id: `${thread}-${i}`, prompt: `${thread}${i}` }))), "ok"], child, admission }).agent.invoke(
        { messages: [humanMessage("go")] },
        { threadId: thread },
      );
    let peak = 0;
    let queued = 0;
    const timer = setInterval(() => {
      peak = Math.max(peak, admission.active);
      queued = Math.max(queued, admission.waiting);
    }, 5);
    const results = await Promise.all([mk("qa"), mk("qb")]);
    clearInterval(timer);
    expect(peak).toBe(4);
    expect(queued).toBeGreaterThan(0);
    for (const r of results) {
      const texts = (toolMessages(r.state.messages) as ToolMessage[]).map((m) => contentText(m.content));
      expect(texts.every((t) => t.startsWith("Task Succeeded."))).toBe(true);
    }
    expect(admission.active).toBe(0);
  });
});
