import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent } from "../../src/runtime";
import type { StreamEvent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { humanMessage, messageText } from "../../src/messages";
import { MemoryCheckpointStore } from "../../src/checkpoints";

describe("nested runs", () => {
  it("a sub-agent's stream appears under the parent with its namespace, without touching the parent thread", async () => {
    const store = new MemoryCheckpointStore();
    const child = createAgent({ model: new ScriptedModel(["child says hi"]), name: "child", checkpointer: store });
    const delegate = tool({
      name: "task",
      description: "delegate",
      schema: z.object({ prompt: z.string() }),
      execute: async ({ prompt }, rt) => {
        const s = child.stream({ messages: [humanMessage(prompt)] }, {
          ephemeral: true,
          namespace: [...rt.namespace, `task:${rt.toolCallId}`],
          signal: rt.signal,
          streamMode: ["messages", "values"],
        });
        for await (const e of s) rt.emit(e);
        const r = await s.result;
        return `Task Succeeded. Result: ${messageText(r.state.messages.at(-1)!)}`;
      },
    });
    const parent = createAgent({ model: new ScriptedModel([{ toolCalls: [{ name: "task", args: { prompt: "go" }, id: "c1" }] }, "ok"]), tools: [delegate], checkpointer: store });
    const events: StreamEvent[] = [];
    const s = parent.stream({ messages: [humanMessage("x")] }, { threadId: "nest", streamMode: ["messages", "values"] });
    for await (const e of s) events.push(e);
    const r = await s.result;
    expect(r.status).toBe("success");
    const nested = events.filter((e) => e.ns.length);
    expect(nested.length).toBeGreaterThan(0);
    expect(nested.every((e) => e.ns[0] === "task:c1")).toBe(true);
    const childText = nested.filter((e) => e.mode === "messages").map((e) => (e.data as any[])[0]).filter((c) => c.type === "AIMessageChunk").map((c) => c.content).join("");
    expect(childText).toBe("child says hi");
    expect((r.state.messages[2] as any).content).toBe("Task Succeeded. Result: child says hi");
    // The ephemeral child wrote no checkpoints: the parent thread holds only its own 4 messages.
    expect((await parent.getState("nest"))!.values.messages).toHaveLength(4);
  });
});
