import { describe, expect, it } from "vitest";
import { humanMessage, toolMessage } from "../../src/messages";
import type { ToolCallRequest } from "../../src/runtime";
import { createAgent } from "../../src/runtime";
import { isCommand } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import { askClarificationTool } from "../../src/builtins/ask-clarification";
import { CLARIFICATION_DISABLED_TEXT, createClarificationMiddleware } from "../../src/middlewares/clarification";
import { leadRuntime, leadState } from "./_fixtures-lead";

const req = (args: Record<string, unknown>, context: Record<string, unknown> = {}, name = "ask_clarification"): ToolCallRequest => ({
  toolCall: { id: "call-9", name, args, type: "tool_call" },
  state: leadState([]),
  runtime: leadRuntime({ context }),
});
const never = async () => {
  throw new Error("tool must not execute");
};

describe("ClarificationMiddleware", () => {
  const mw = createClarificationMiddleware();

  it("passes other tools through", async () => {
    const m = toolMessage("x", { tool_call_id: "call-9" });
    expect(await mw.wrapToolCall!(req({}, {}, "bash"), async () => m)).toBe(m);
  });

  it("ends the run with a formatted question and a v1 choice payload", async () => {
    const out = await mw.wrapToolCall!(req({ question: "Which DB?", clarification_type: "approach_choice", context: "Two options fit", options: ["Postgres", "<b>SQLite</b>", "Postgres"] }), never);
    expect(isCommand(out)).toBe(true);
    if (!isCommand(out)) return;
    expect(out.goto).toBe("end");
    const msg = (out.update.messages as any[])[0];
    expect(msg).toMatchObject({ type: "tool", id: "clarification:call-9", name: "ask_clarification", tool_call_id: "call-9" });
    expect(msg.content).toBe("🔀 Two options fit\n\nWhich DB?\n\n  1. Postgres\n  2. SQLite");
    expect(msg.artifact.human_input).toEqual({
      version: 1,
      kind: "human_input_request",
      source: "ask_clarification",
      request_id: "clarification:call-9",
      tool_call_id: "call-9",
      clarification_type: "approach_choice",
      question: "Which DB?",
      context: "Two options fit",
      input_mode: "choice_with_other",
      options: [
        { id: "option-1", label: "Postgres", value: "Postgres" },
        { id: "option-2", label: "SQLite", value: "SQLite" },
      ],
    });
  });

  it.each([
    ["missing_info", "❓"],
    ["ambiguous_requirement", "🤔"],
    ["risk_confirmation", "⚠️"],
    ["suggestion", "💡"],
  ])("icon for %s", async (type, icon) => {
    const out = await mw.wrapToolCall!(req({ question: "Q?", clarification_type: type }), never);
    expect(((out as any).update.messages[0].content as string).startsWith(`${icon} Q?`)).toBe(true);
    expect((out as any).update.messages[0].artifact.human_input.input_mode).toBe("free_text");
  });

  it("builds a v2 form from fields and degrades to v1 when any cap is broken", async () => {
    const fields = [
      { name: "env", label: "Environment", type: "select", options: ["dev", "prod"], required: true },
      { name: "tags", type: "multi_select", options: ["a", "b"] },
      { name: "note", type: "weird", placeholder: " hint " },
    ];
    const out = (await mw.wrapToolCall!(req({ question: "Config?", clarification_type: "missing_info", fields }), never)) as any;
    const hi = out.update.messages[0].artifact.human_input;
    expect(hi.version).toBe(2);
    expect(hi.input_mode).toBe("form");
    expect(hi.fields).toEqual([
      { name: "env", label: "Environment", type: "select", required: true, options: [{ id: "env-option-1", label: "dev", value: "dev" }, { id: "env-option-2", label: "prod", value: "prod" }] },
      { name: "tags", label: "tags", type: "multi_select", required: false, options: [{ id: "tags-option-1", label: "a", value: "a" }, { id: "tags-option-2", label: "b", value: "b" }] },
      { name: "note", label: "note", type: "text", required: false, placeholder: "hint" },
    ]);
    expect(out.update.messages[0].content).toBe(
      "❓ Config?\n\n  1. Environment (required) — options: dev / prod\n  2. tags — options: a / b (multiple allowed)\n  3. note\n\nPlease reply with a value for each field.",
    );
    const tooMany = Array.from({ length: 17 }, (_, i) => ({ name: `f${i}` }));
    const reserved = [{ name: "constructor" }];
    const longOpt = [{ name: "x", type: "select", options: ["y".repeat(201)] }];
    const manyOpts = [{ name: "x", type: "select", options: Array.from({ length: 25 }, (_, i) => `o${i}`) }];
    const huge = Array.from({ length: 16 }, (_, i) => ({ name: `f${i}`, type: "select", options: Array.from({ length: 24 }, (_, j) => `${"z".repeat(150)}${j}`) }));
    for (const bad of [tooMany, reserved, longOpt, manyOpts, huge, [{ name: "a" }, { name: "a" }]]) {
      const r = (await mw.wrapToolCall!(req({ question: "Q", clarification_type: "missing_info", fields: bad }), never)) as any;
      expect(r.update.messages[0].artifact.human_input).toMatchObject({ version: 1, input_mode: "free_text" });
    }
  });

  it("disable_clarification → plain ToolMessage that lets the run continue", async () => {
    const out = await mw.wrapToolCall!(req({ question: "Sure?", clarification_type: "risk_confirmation" }, { disable_clarification: true }), never);
    expect(isCommand(out)).toBe(false);
    expect(out).toMatchObject({ type: "tool", name: "ask_clarification", content: CLARIFICATION_DISABLED_TEXT, tool_call_id: "call-9" });
  });

  it("full run: clarification ends the run (success) and the next run continues the thread", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "ask_clarification", args: { question: "Which file?", clarification_type: "missing_info" }, id: "ask1" }] },
      "Working on notes.txt",
    ]);
    const agent = createAgent({ model, tools: [askClarificationTool], middleware: [createClarificationMiddleware()] });
    const r1 = await agent.invoke({ messages: [humanMessage("edit the file")] }, { threadId: "cl1" });
    expect(r1.status).toBe("success");
    expect(model.callCount).toBe(1);
    const last = r1.state.messages.at(-1) as any;
    expect(last).toMatchObject({ type: "tool", name: "ask_clarification", content: "❓ Which file?" });
    expect(last.artifact.human_input.request_id).toBe("clarification:ask1");
    const r2 = await agent.invoke({ messages: [humanMessage("notes.txt")] }, { threadId: "cl1" });
    expect(r2.state.messages.at(-1)!.content).toBe("Working on notes.txt");
    expect(model.requests[1].messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "human"]);
  });
});
