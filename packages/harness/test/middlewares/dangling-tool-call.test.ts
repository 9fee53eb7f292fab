import { describe, expect, it } from "vitest";
import { z } from "zod";
import { aiMessage, contentText, humanMessage, toolMessage } from "../../src/messages";
import type { AIMessage, Message, ToolMessage } from "../../src/messages";
import {
  createDanglingToolCallMiddleware,
  INTERRUPTED_TOOL_CALL_TEXT,
  patchDanglingToolCalls,
} from "../../src/middlewares/dangling-tool-call";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { captureModel, modelRequest } from "./_fixtures-guards";

const call = (id: string, name = "bash", args: Record<string, unknown> = {}) => ({ id, name, args });

async function patched(messages: Message[]): Promise<Message[]> {
  const { seen, handler } = captureModel();
  await createDanglingToolCallMiddleware().wrapModelCall!(modelRequest(messages), handler);
  return seen[0].messages;
}

describe("DanglingToolCallMiddleware", () => {
  it("leaves a well-formed transcript identical (same request)", async () => {
    const msgs = [humanMessage("q"), aiMessage("", { tool_calls: [call("a")] }), toolMessage("r", { tool_call_id: "a" }), aiMessage("done")];
    expect(patchDanglingToolCalls(msgs)).toBeNull();
    const { seen, handler } = captureModel();
    const req = modelRequest(msgs);
    await createDanglingToolCallMiddleware().wrapModelCall!(req, handler);
    expect(seen[0]).toBe(req);
  });

  it("inserts an error placeholder immediately after the AI message, before later messages", async () => {
    const ai = aiMessage("", { tool_calls: [call("a"), call("b", "web_search")] });
    const state = [humanMessage("q"), ai, toolMessage("ra", { tool_call_id: "a" }), humanMessage("next question")];
    const out = await patched(state);
    expect(out.map((m) => m.type)).toEqual(["human", "ai", "tool", "tool", "human"]);
    const [ta, tb] = [out[2], out[3]] as ToolMessage[];
    expect(ta.content).toBe("ra");
    expect(tb).toMatchObject({ tool_call_id: "b", name: "web_search", status: "error", content: INTERRUPTED_TOOL_CALL_TEXT });
    expect(INTERRUPTED_TOOL_CALL_TEXT).toBe("[Tool call was interrupted and did not return a result.]");
    expect(state).toHaveLength(4); // state untouched
  });

  it("regroups results that drifted after a later message and drops orphans", async () => {
    const out = await patched([
      toolMessage("orphan", { tool_call_id: "ghost" }),
      humanMessage("q"),
      aiMessage("", { tool_calls: [call("a")] }),
      humanMessage("interjection"),
      toolMessage("ra", { tool_call_id: "a" }),
    ]);
    expect(out.map((m) => (m.type === "tool" ? `tool:${(m as ToolMessage).tool_call_id}` : m.type))).toEqual(["human", "ai", "tool:a", "human"]);
  });

  it("answers invalid tool calls with the invalid-args text, capped at 500 chars", async () => {
    const long = "E".repeat(800);
    const ai = aiMessage("", { invalid_tool_calls: [{ id: "x", name: "web_search", args: "{bad", error: long }] });
    const out = await patched([humanMessage("q"), ai]);
    const t = out[2] as ToolMessage;
    expect(t.content).toBe(`[Tool call could not be executed because its arguments were invalid: ${"E".repeat(500)}]`);
    expect(t.status).toBe("error");
    const sentAi = out[1] as AIMessage;
    expect(sentAi.invalid_tool_calls[0].args).toBe("{}"); // unparsable args sanitized for replay
    expect(ai.invalid_tool_calls[0].args).toBe("{bad");
    const noErr = await patched([aiMessage("", { invalid_tool_calls: [{ id: "y", name: "bash", args: "{" }] })]);
    expect(noErr[1].content).toBe("[Tool call could not be executed because its arguments were invalid.]");
  });

  it("gives write_file the split-the-file advice", async () => {
    const out = await patched([aiMessage("", { invalid_tool_calls: [{ id: "w", name: "write_file", args: '{"content": "unterminated', error: "Unterminated string" }] })]);
    const text = contentText(out[1].content);
    expect(text).toMatch(/^\[write_file failed before execution: the tool-call arguments were not valid JSON, so no file was written\./);
    expect(text).toContain("split the file into smaller sections instead of one large payload. Parser error: Unterminated string]");
  });

  it("names empty tool names unknown_tool and uses the empty-name text", async () => {
    const ai = aiMessage("", { tool_calls: [{ id: "e", name: "  ", args: {} }] });
    const out = await patched([ai]);
    expect((out[0] as AIMessage).tool_calls[0].name).toBe("unknown_tool");
    expect(out[1]).toMatchObject({
      name: "unknown_tool",
      content: "[Tool call could not be executed because its name was missing or empty. Use one of the available tool names when retrying.]",
    });
    expect(ai.tool_calls[0].name).toBe("  ");
  });

  it("handles raw additional_kwargs.tool_calls and sanitizes their arguments", async () => {
    const ai = aiMessage("", {
      additional_kwargs: { tool_calls: [{ id: "r1", type: "function", function: { name: "", arguments: "{not json" } }] },
    });
    const out = await patched([ai]);
    const raw = (out[0] as AIMessage).additional_kwargs.tool_calls as Array<{ function: { name: string; arguments: string } }>;
    expect(raw[0].function).toEqual({ name: "unknown_tool", arguments: "{}" });
    expect(out[1]).toMatchObject({ type: "tool", tool_call_id: "r1", status: "error" });
  });

  it("gives id-less calls a synthetic id and pairs their id-less result", async () => {
    const ai = aiMessage("", { tool_calls: [{ id: "", name: "bash", args: {} }] });
    const res = toolMessage("ok", { tool_call_id: "" });
    const out = await patched([humanMessage("q"), ai, res]);
    const id = (out[1] as AIMessage).tool_calls[0].id;
    expect(id).toMatch(/^deerflow_synthetic_tool_call_1_call_0$/);
    expect(out[2]).toMatchObject({ tool_call_id: id, content: "ok" });
    expect(out).toHaveLength(3);
  });

  it("full agent run: a dangling call from a previous run gets its placeholder right after its AI message", async () => {
    const slow = tool({ name: "bash", description: "run", schema: z.object({ command: z.string() }), execute: () => "ran" });
    const model = new ScriptedModel(["answer"]);
    const agent = createAgent({ model, tools: [slow], middleware: [createDanglingToolCallMiddleware()] });
    // Seed a thread whose last AI message has an unanswered tool call (as after a cancelled run).
    await agent.updateState("dt-1", {
      messages: [humanMessage("first"), aiMessage("", { tool_calls: [call("cut", "bash", { command: "sleep 99" })] })],
    });
    await agent.invoke({ messages: [humanMessage("second")] }, { threadId: "dt-1" });
    const sent = model.requests[0].messages.filter((m) => m.type !== "system");
    expect(sent.map((m) => m.type)).toEqual(["human", "ai", "tool", "human"]);
    expect(sent[2]).toMatchObject({ tool_call_id: "cut", status: "error", content: INTERRUPTED_TOOL_CALL_TEXT });
  });
});
