import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, MemoryCheckpointStore, threadStateSchema } from "../../src";
import type { AgentMiddleware, StreamEvent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { humanMessage } from "../../src/messages";

const echo = tool({ name: "echo", description: "Echo", schema: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });
const stamp: AgentMiddleware = { name: "StampMiddleware", beforeAgent: () => ({ title: "t" }) };

async function run(modes: StreamEvent["mode"][]): Promise<StreamEvent[]> {
  const agent = createAgent({
    model: new ScriptedModel([{ text: "Calling.", toolCalls: [{ name: "echo", args: { text: "hi" }, id: "c1" }] }, "done"]),
    tools: [echo],
    middleware: [stamp],
    stateSchema: threadStateSchema,
    checkpointer: new MemoryCheckpointStore(),
  });
  const events: StreamEvent[] = [];
  const res = await agent.stream({ messages: [humanMessage("go")] }, { threadId: "t", streamMode: modes, onEvent: (e) => events.push(e) }).result;
  expect(res.error?.message ?? res.status).toBe("success");
  return events;
}

describe("tasks and debug stream modes", () => {
  it("emits each task's start and result as LangGraph does: hooks and the model pulled by their branch, tool calls pushed", async () => {
    const tasks = (await run(["tasks"])).map((e) => e.data as Record<string, unknown>);
    const starts = tasks.filter((t) => "triggers" in t);
    const results = tasks.filter((t) => "result" in t);
    expect(starts.map((t) => t.name)).toEqual(["StampMiddleware.before_agent", "model", "tools", "model"]);
    expect(starts[0].triggers).toEqual(["branch:to:StampMiddleware.before_agent"]);
    expect(starts[2]).toMatchObject({ triggers: ["__pregel_push"], input: { name: "echo", id: "c1" } });
    expect(results.map((t) => t.id)).toEqual(starts.map((t) => t.id));
    expect(results[0]).toEqual({ id: starts[0].id, name: "StampMiddleware.before_agent", error: null, result: { title: "t" }, interrupts: [] });
    expect((results[2].result as { messages: Array<{ content: string }> }).messages[0].content).toBe("echo: hi");
  });

  it("debug wraps the same tasks and adds a checkpoint frame per checkpoint written", async () => {
    const debug = (await run(["debug"])).map((e) => e.data as { type: string; step: number; timestamp: string; payload: Record<string, unknown> });
    expect(new Set(debug.map((d) => d.type))).toEqual(new Set(["checkpoint", "task", "task_result"]));
    const cp = debug.find((d) => d.type === "checkpoint")!;
    expect(cp.payload).toMatchObject({ config: { configurable: { thread_id: "t", checkpoint_ns: "" } }, parent_config: null, next: ["model"] });
    expect(cp.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(debug.at(-1)!.type).toBe("checkpoint");
  });

  it("names each node's namespace <node>:<task-id> in messages metadata, the same id as its task", async () => {
    const events = await run(["messages", "tasks"]);
    const starts = events.filter((e) => e.mode === "tasks" && "triggers" in (e.data as object)).map((e) => e.data as { id: string; name: string });
    const metas = events.filter((e) => e.mode === "messages").map((e) => (e.data as [unknown, Record<string, unknown>])[1]);
    const modelNs = metas.filter((m) => m.langgraph_node === "model").map((m) => m.langgraph_checkpoint_ns);
    expect(new Set(modelNs)).toEqual(new Set(starts.filter((s) => s.name === "model").map((s) => `model:${s.id}`)));
    const toolMeta = metas.find((m) => m.langgraph_node === "tools")!;
    expect(toolMeta.langgraph_checkpoint_ns).toBe(`tools:${starts.find((s) => s.name === "tools")!.id}`);
    for (const m of metas) expect(String(m.langgraph_checkpoint_ns)).toMatch(/^[\w.]+:[0-9a-f-]{36}$/);
  });

  it("builds no task frames when neither mode is streamed", async () => {
    const events = await run(["values", "updates"]);
    expect(events.some((e) => e.mode === "tasks" || e.mode === "debug")).toBe(false);
  });
});
