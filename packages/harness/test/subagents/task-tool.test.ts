import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { z } from "zod";
import { contentText, humanMessage } from "../../src/messages";
import type { AIMessage, ToolMessage } from "../../src/messages";
import { SUBAGENT_LIMIT_REACHED_MESSAGE } from "../../src/middlewares/subagent-limit";
import { BASH_SUBAGENT_DISABLED_MESSAGE } from "../../src/subagents";
import { tool } from "../../src/tools";
import { ConcurrencyProbe, childModel, collect, customEvents, delegate, leadHarness, toolMessages } from "./_fixtures";

const echoTool = (name: string) => tool({ name, description: `${name} tool`, schema: z.object({ q: z.string().optional() }), execute: () => `${name} ok` });

describe("task tool: delegation end to end", () => {
  it("runs the sub-agents of one response concurrently and returns the result contract", async () => {
    const probe = new ConcurrencyProbe(childModel((task) => ({ text: `report for ${task}`, delayMs: 120, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } })));
    const { agent } = leadHarness({
      lead: [delegate({ id: "t1", prompt: "alpha" }, { id: "t2", prompt: "beta" }, { id: "t3", prompt: "gamma" }), "combined"],
      child: probe,
    });
    const stream = agent.stream({ messages: [humanMessage("go")] }, { threadId: "par-1" });
    const events = await collect(stream);
    const res = await stream.result;
    expect(res.status).toBe("success");
    expect(probe.calls).toBe(3);
    expect(probe.peak).toBe(3); // all three model calls were in flight at the same time (wall time is no measure on a loaded machine)
    const tms = toolMessages(res.state.messages) as ToolMessage[];
    expect(tms.map((m) => contentText(m.content))).toEqual(["Task Succeeded. Result: report for alpha", "Task Succeeded. Result: report for beta", "Task Succeeded. Result: report for gamma"]);
    const k = tms[0].additional_kwargs;
    expect(k.subagent_status).toBe("completed");
    expect(k.subagent_result_brief).toBe("report for alpha");
    expect(k.subagent_result_sha256).toBe(createHash("sha256").update("report for alpha").digest("hex"));
    expect(k.subagent_model_name).toBe("lead-model"); // inherit = the parent's model name
    expect(k.subagent_token_usage).toEqual({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });
    expect(tms[0].status).toBe("success");
    // usage reaches the parent's outcome once per child, as subagent:<type>
    expect(res.outcome.usageByCaller["subagent:general-purpose"]).toEqual({ input_tokens: 30, output_tokens: 15, total_tokens: 45, calls: 3 });
    // streamed lifecycle, DeerFlow payloads
    const t1 = customEvents(events).filter((e) => e.task_id === "t1");
    expect(t1.map((e) => e.type)).toEqual(["task_started", "task_running", "task_completed"]);
    expect(t1[0]).toEqual({ type: "task_started", task_id: "t1", description: "do t1", model_name: "lead-model" });
    expect(t1[1]).toMatchObject({ message_index: 1, total_messages: 1, usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, model_name: "lead-model" });
    expect((t1[1].message as AIMessage).type).toBe("ai");
    expect(t1[2]).toEqual({ type: "task_completed", task_id: "t1", result: "report for alpha", usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, model_name: "lead-model" });
    // the child's own token stream is nested under task:<id>
    const nested = events.filter((e) => e.ns[0] === "task:t2" && e.mode === "messages");
    expect(nested.length).toBeGreaterThan(0);
    expect(nested.map((e) => ((e.data as [{ content?: string }])[0].content ?? "")).join("")).toContain("report for beta");
  });

  it("gives general-purpose the parent's tools minus task, ask_clarification and present_files; roles get their own sets", async () => {
    const parentTools = ["read_file", "write_file", "bash", "ask_clarification", "present_files", "web_search"].map(echoTool);
    const child = childModel(() => "done");
    const { agent, specs } = leadHarness({
      lead: [delegate({ id: "a", prompt: "x" }, { id: "b", prompt: "y", type: "planner" }, { id: "c", prompt: "z", type: "coder" }), "ok"],
      child,
      parentTools,
    });
    await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "tools-1" });
    const byType = Object.fromEntries(specs.map((s) => [s.config.name, s.tools.map((t) => t.name).sort()]));
    expect(byType["general-purpose"]).toEqual(["bash", "read_file", "web_search", "write_file"]);
    expect(byType.planner).toEqual(["read_file", "web_search"]);
    expect(byType.coder).toEqual(["bash", "read_file", "write_file"]);
    // what the child model actually saw
    const seen = child.requests.map((r) => r.tools.map((t) => t.name).sort());
    expect(seen).toContainEqual(["bash", "read_file", "web_search", "write_file"]);
    for (const tools of seen) expect(tools).not.toContain("task");
  });

  it("reports bad input as failed results the model can read", async () => {
    const child = childModel(() => "never");
    const { agent } = leadHarness({
      lead: [delegate({ id: "u", prompt: "x", type: "nope" }, { id: "e", prompt: "   " }, { id: "b", prompt: "ls", type: "bash" }), "ok"],
      child,
    });
    const res = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "bad-1" });
    const [unknown, empty, bash] = toolMessages(res.state.messages) as ToolMessage[];
    expect(contentText(unknown.content)).toBe(
      "Task failed. Error: Unknown subagent type 'nope'. Available: general-purpose, planner, researcher, coder, reviewer",
    );
    expect(unknown.additional_kwargs.subagent_status).toBe("failed");
    expect(unknown.status).toBe("error");
    expect(contentText(empty.content)).toMatch(/^Task failed\. Error: The task prompt is empty\./);
    expect(contentText(bash.content)).toBe(`Task failed. Error: ${BASH_SUBAGENT_DISABLED_MESSAGE}`);
    expect(child.callCount).toBe(0);
  });

  it("never turns a failing or empty sub-agent into success", async () => {
    const child = childModel((task) => (task === "crash" ? { error: { kind: "bad_request", message: "provider said no" } } : { text: "" }));
    const { agent } = leadHarness({ lead: [delegate({ id: "x", prompt: "crash" }, { id: "y", prompt: "empty" }), "ok"], child });
    const res = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "fail-1" });
    const [crash, empty] = toolMessages(res.state.messages) as ToolMessage[];
    expect(contentText(crash.content)).toMatch(/^Task failed\. Error: .*provider said no/);
    expect(crash.additional_kwargs.subagent_status).toBe("failed");
    expect(crash.additional_kwargs.subagent_error).toMatch(/provider said no/);
    expect(contentText(empty.content)).toBe("Task failed. Error: No response generated");
    expect(res.status).toBe("success");
  });

  it("caps max_turns in MODEL turns: partial text stays completed+turn_capped, none is failed", async () => {
    const looping = echoTool("read_file");
    const child = childModel((task, turn) =>
      task === "talky" ? { text: `step ${turn}`, toolCalls: [{ name: "read_file", args: { q: String(turn) } }] } : { toolCalls: [{ name: "read_file", args: { q: String(turn) } }] },
    );
    const { agent } = leadHarness({
      lead: [delegate({ id: "p", prompt: "talky", extra: { max_turns: 3 } }, { id: "q", prompt: "silent", extra: { max_turns: 2 } }), "ok"],
      child,
      parentTools: [looping],
    });
    const res = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "turns-1" });
    const [talky, silent] = toolMessages(res.state.messages) as ToolMessage[];
    expect(contentText(talky.content)).toBe("Task Succeeded (capped: turn budget). Result: step 2");
    expect(talky.additional_kwargs.subagent_stop_reason).toBe("turn_capped");
    expect(contentText(silent.content)).toBe("Task failed (capped: turn budget). Error: Reached max_turns=2");
    expect(child.callCount).toBe(5); // 3 + 2 model calls, tool steps not counted
  });

  it("caps per response and per run (SubagentLimit + ledger), appending the limit note when exhausted", async () => {
    const child = childModel((task) => `ok ${task}`);
    const { agent } = leadHarness({
      lead: [
        delegate(...["1", "2", "3", "4", "5"].map((id) => ({ id: `a${id}`, prompt: id }))),
        delegate(...["6", "7"].map((id) => ({ id: `b${id}`, prompt: id }))),
        delegate({ id: "c1", prompt: "late" }),
        "final",
      ],
      child,
      maxConcurrent: 3,
      maxTotal: 4,
    });
    const res = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "limit-1" });
    const ids = (toolMessages(res.state.messages) as ToolMessage[]).map((m) => m.tool_call_id);
    expect(ids).toEqual(["a1", "a2", "a3", "b6"]); // 3 of 5, then 1 of 2 (budget 4), then none
    const ais = res.state.messages.filter((m) => m.type === "ai") as AIMessage[];
    expect(ais[0].tool_calls.map((c) => c.id)).toEqual(["a1", "a2", "a3"]);
    expect(ais[2].tool_calls).toEqual([]);
    expect(contentText(ais[2].content)).toContain(SUBAGENT_LIMIT_REACHED_MESSAGE);
    expect(res.outcome.stopReason).toBe("subagent_limit_capped");
    expect(res.state.delegations.map((d) => [d.id, d.status, d.run_id])).toEqual([
      ["a1", "completed", res.state.delegations[0].run_id],
      ["a2", "completed", res.state.delegations[0].run_id],
      ["a3", "completed", res.state.delegations[0].run_id],
      ["b6", "completed", res.state.delegations[0].run_id],
    ]);
  });

  it("shows the delegation ledger with DeerFlow's guidance to the lead model", async () => {
    const child = childModel(() => "found 42");
    const { agent, leadModel } = leadHarness({ lead: [delegate({ id: "d1", prompt: "count", description: "count things" }), "the answer is 42"], child });
    await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "ledger-1" });
    const second = leadModel.requests[1].messages;
    const data = second.find((m) => m.additional_kwargs?.durable_context_data === true);
    expect(data).toBeDefined();
    const text = contentText(data!.content);
    expect(text).toContain("<durable_context_data>\n## Work already delegated");
    expect(text).toContain("- [completed] count things (via general-purpose; completed result; do NOT delegate again; reuse this result) -> found 42");
    const before = second[second.indexOf(data!) - 1];
    expect(before.type).toBe("system");
    expect(contentText(before.content)).toMatch(/^## Durable context authority contract/);
  });
});
