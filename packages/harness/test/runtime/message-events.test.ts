import { describe, expect, it } from "vitest";
import { messageEventMeta, unseenMessages } from "../../src/runtime/message-events";
import type { ChatModel } from "../../src/models";
import type { Message } from "../../src/messages";

const TASK = "1f0c2b7e-0000-4000-8000-000000000001";
const src = { metadata: { model_name: "m" }, threadId: "t1", ns: [] as string[], step: 3, task: { id: TASK } };

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
      langgraph_checkpoint_ns: `model:${TASK}`,
      checkpoint_ns: `model:${TASK}`,
      ls_provider: "openai",
      ls_model_name: "gpt",
      ls_model_type: "chat",
      ls_temperature: null,
    });
  });

  it("marks tool messages as a pushed task, and a nested run carries its parent's namespace before its own", () => {
    const meta = messageEventMeta({ ...src, ns: ["tools:p1"] }, "tools");
    expect(meta.langgraph_triggers).toEqual(["__pregel_push"]);
    expect(meta.langgraph_path).toEqual(["__pregel_push", 0, false]);
    expect(meta.langgraph_checkpoint_ns).toBe(`tools:p1|tools:${TASK}`);
    expect(meta.checkpoint_ns).toBe(`tools:p1|tools:${TASK}`);
    expect(meta).not.toHaveProperty("ls_provider");
  });

  it("a hook's echo at the top level names its node's namespace only in langgraph_checkpoint_ns", () => {
    const meta = messageEventMeta(src, "DynamicContextMiddleware.before_agent");
    expect(meta.langgraph_checkpoint_ns).toBe(`DynamicContextMiddleware.before_agent:${TASK}`);
    expect(meta).not.toHaveProperty("checkpoint_ns");
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
