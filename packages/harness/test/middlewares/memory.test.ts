import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors";
import { aiMessage, humanMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { createMemoryMiddleware } from "../../src/middlewares/memory";
import { ScriptedModel } from "../../src/testing";
import { leadRuntime, leadState } from "./_fixtures-lead";

describe("MemoryMiddleware", () => {
  it("validates options", () => {
    expect(() => createMemoryMiddleware({} as never)).toThrow(/sink/);
    expect(() => createMemoryMiddleware({ sink: { enqueue() {} }, enabled: "yes" as never })).toThrow(ConfigError);
  });

  it("after the agent, enqueues the conversation with the thread, the user captured now, and the agent name", async () => {
    const calls: unknown[] = [];
    const mw = createMemoryMiddleware({ sink: { enqueue: (i) => void calls.push(i) } });
    const msgs = [humanMessage("I like tea"), aiMessage("Noted.")];
    await mw.afterAgent!(leadState(msgs), leadRuntime({ threadId: "t7", context: { user_id: "alice", agent_name: "writer" } }));
    expect(calls).toEqual([{ threadId: "t7", userId: "alice", agentName: "writer", messages: msgs }]);
    await createMemoryMiddleware({ sink: { enqueue: (i) => void calls.push(i) }, enabled: false }).afterAgent!(leadState(msgs), leadRuntime());
    expect(calls).toHaveLength(1);
  });

  it("a failing sink never fails the run", async () => {
    const mw = createMemoryMiddleware({ sink: { enqueue: () => { throw new Error("queue broken"); } } });
    const agent = createAgent({ model: new ScriptedModel(["Hello!"]), middleware: [mw] });
    const result = await agent.invoke({ messages: [humanMessage("hi")] }, { threadId: "t1" });
    expect(result.status).toBe("success");
  });
});
