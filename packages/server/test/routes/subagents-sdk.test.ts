import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { createDeerflowAgent } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { ScriptStep } from "@deerflow-ts/harness/testing";
import { humanInput, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

/** Lead (offered `task`) delegates two tasks; each child answers with its task's keyword. */
function delegatingModel(): ScriptedModel {
  const step: ScriptStep = (req) => {
    if (!req.tools.some((t) => t.name === "task")) {
      const task = req.messages.filter((m) => m.type === "human").map((m) => JSON.stringify(m.content)).join(" ");
      return { text: task.includes("alpha") ? "alpha found" : "beta found", usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6 } };
    }
    if (req.messages.some((m) => m.type === "tool")) return "Both done.";
    return {
      toolCalls: [
        { id: "call_a", name: "task", args: { description: "look for alpha", prompt: "find alpha", subagent_type: "general-purpose" } },
        { id: "call_b", name: "task", args: { description: "look for beta", prompt: "find beta", subagent_type: "general-purpose" } },
      ],
    };
  };
  return new ScriptedModel([step], { onExhausted: "repeat-last" });
}

describe("sub-agent events through the gateway (real @langchain/langgraph-sdk Client)", () => {
  it("streams task_* custom events with DeerFlow's payloads, nests the child stream only with subgraphs, records subagent_tokens", async () => {
    const model = delegatingModel();
    gw = await startTestGateway({
      agentFactory: ({ checkpointer }) => createDeerflowAgent(model, [], { features: { subagent: true, sandbox: false }, checkpointer, name: "lead_agent" }),
    });
    const client = new Client({ apiUrl: `${gw.url}/api/langgraph` });
    const thread = await client.threads.create();
    const custom: Array<Record<string, unknown>> = [];
    const events: string[] = [];
    let runId = "";
    for await (const part of client.runs.stream(thread.thread_id, "lead_agent", {
      input: humanInput("find both"),
      streamMode: ["values", "messages-tuple", "custom"],
      streamSubgraphs: true,
      onRunCreated: (m) => {
        runId = m.run_id;
      },
    })) {
      events.push(part.event);
      if (part.event === "custom") custom.push(part.data as Record<string, unknown>);
    }
    const forA = custom.filter((e) => e.task_id === "call_a");
    expect(forA.map((e) => e.type)).toEqual(["task_started", "task_running", "task_completed"]);
    expect(forA[0]).toEqual({ type: "task_started", task_id: "call_a", description: "look for alpha", model_name: "scripted" });
    expect(forA[1]).toMatchObject({ message_index: 1, total_messages: 1, usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6 }, message: { type: "ai" } });
    expect(forA[2]).toEqual({ type: "task_completed", task_id: "call_a", result: "alpha found", usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6 }, model_name: "scripted" });
    // the children's own token streams arrive under task:<id> because subgraphs were requested
    expect(events.some((e) => e.startsWith("messages") && e.includes("|task:call_a"))).toBe(true);
    expect(events.some((e) => e.includes("|task:call_b"))).toBe(true);

    const state = await client.threads.getState(thread.thread_id);
    const tools = (state.values as { messages: Array<Record<string, unknown>> }).messages.filter((m) => m.type === "tool");
    expect(tools.map((m) => m.content)).toEqual(["Task Succeeded. Result: alpha found", "Task Succeeded. Result: beta found"]);
    expect(tools[0].additional_kwargs).toMatchObject({ subagent_status: "completed", subagent_result_brief: "alpha found", subagent_token_usage: { total_tokens: 6 } });
    const run = (await client.runs.get(thread.thread_id, runId)) as unknown as Record<string, unknown>;
    expect(run.subagent_tokens).toBe(12); // two children × 6 tokens, recorded once each

    // without subgraphs: the same custom events, no namespaced frames
    const thread2 = await client.threads.create();
    const events2: string[] = [];
    let custom2 = 0;
    for await (const part of client.runs.stream(thread2.thread_id, "lead_agent", { input: humanInput("again"), streamMode: ["messages-tuple", "custom"] })) {
      events2.push(part.event);
      if (part.event === "custom" && String((part.data as { type?: string }).type).startsWith("task_")) custom2++;
    }
    expect(custom2).toBe(6);
    expect(events2.some((e) => e.includes("|"))).toBe(false);
  });
});
