import { describe, expect, it } from "vitest";
import { messageEventMeta, unseenMessages } from "../../src/runtime/message-events";
import type { ChatModel } from "../../src/models";
import type { Message } from "../../src/messages";

const src = { metadata: { model_name: "m" }, threadId: "t1", runId: "r1", ns: [] as string[], step: 3 };

describe("messageEventMeta", () => {
  it("marks a model node as reached by its branch, with the provider keys and its checkpoint namespace", () => {
    const model = { provider: "openai", modelName: "gpt" } as unknown as ChatModel;
    expect(messageEventMeta(src, "model", model)).toEqual({
      model_name: "m",
      thread_id: "t1",
      langgraph_step: 3,
      langgraph_node: "model",
      langgraph_triggers: ["branch:to:model"],
      langgraph_path: ["__pregel_pull", "model"],
      langgraph_checkpoint_ns: "model:r1:3",
      checkpoint_ns: "model:r1:3",
      ls_provider: "openai",
      ls_model_name: "gpt",
      ls_model_type: "chat",
      ls_temperature: null,
    });
  });

  it("marks tool messages as a pushed task, and a nested run carries its namespace", () => {
    const meta = messageEventMeta({ ...src, ns: ["task:a", "sub"] }, "tools");
    expect(meta.langgraph_triggers).toEqual(["__pregel_push"]);
    expect(meta.langgraph_path).toEqual(["__pregel_push", 0, false]);
    expect(meta.checkpoint_ns).toBe("task:a|sub");
    expect(meta).not.toHaveProperty("ls_provider");
  });
});

describe("unseenMessages", () => {
  const human = (id: string) => ({ type: "human", id, content: id }) as Message;
  it("keeps only messages under ids the thread did not hold, skipping entries without an id or a type", () => {
    const before = [human("a"), human("b")];
    const written = [human("b"), human("c"), { id: "x" }, null, { type: "ai", content: "no id" }];
    expect(unseenMessages(before, written).map((m) => m.id)).toEqual(["c"]);
  });
  it("is empty when the update writes no message list", () => {
    expect(unseenMessages([], undefined)).toEqual([]);
    expect(unseenMessages(undefined, "not a list")).toEqual([]);
  });
});
