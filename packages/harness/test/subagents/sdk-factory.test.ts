import { describe, expect, it } from "vitest";
import { createDeerflowAgent } from "../../src/agents";
import { contentText, humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { ScriptedModel } from "../../src/testing";

describe("createDeerflowAgent features.subagent = true", () => {
  it("adds the task tool, DurableContext and SubagentLimit, and runs children on the same model", async () => {
    const model = new ScriptedModel(
      [
        (req) =>
          req.tools.some((t) => t.name === "task")
            ? req.messages.some((m) => m.type === "tool")
              ? "lead done"
              : { toolCalls: [{ id: "k1", name: "task", args: { description: "sum", prompt: "add 2 and 2", subagent_type: "general-purpose" } }] }
            : "4",
      ],
      { onExhausted: "repeat-last" },
    );
    const agent = createDeerflowAgent(model, [], { features: { subagent: true, sandbox: false } });
    expect(agent.tools.map((t) => t.name)).toContain("task");
    expect(agent.middleware.map((m) => m.name)).toEqual(expect.arrayContaining(["DurableContextMiddleware", "SubagentLimitMiddleware"]));
    const res = await agent.invoke({ messages: [humanMessage("go")] }, { threadId: "sdk-sub" });
    const tm = res.state.messages.find((m) => m.type === "tool") as ToolMessage;
    expect(contentText(tm.content)).toBe("Task Succeeded. Result: 4");
    expect(res.state.delegations[0]).toMatchObject({ id: "k1", status: "completed" });
    expect(contentText(model.requests[0].messages[0].content)).toContain("<subagent_system>");
    // the child saw neither task nor ask_clarification
    const child = model.requests.find((r) => !r.tools.some((t) => t.name === "task"))!;
    expect(child.tools.map((t) => t.name)).not.toContain("ask_clarification");
  });
});
