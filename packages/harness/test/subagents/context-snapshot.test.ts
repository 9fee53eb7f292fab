import { describe, expect, it } from "vitest";
import { aiMessage, contentText, humanMessage, systemMessage, toolMessage } from "../../src/messages";
import type { Message } from "../../src/messages";
import { PARENT_CONTEXT_SNAPSHOT_NAME, renderParentContextSnapshot } from "../../src/subagents";
import { childModel, delegate, leadHarness } from "./_fixtures";

function parentHistory(): Message[] {
  return [
    systemMessage("PARENT SYSTEM PROMPT"),
    humanMessage("<system-reminder>date</system-reminder>", { additional_kwargs: { hide_from_ui: true, dynamic_context_reminder: true } }),
    humanMessage("Compare the two CSV files; the second one is authoritative."),
    aiMessage([{ type: "reasoning", reasoning: "SECRET CHAIN OF THOUGHT" } as never, { type: "text", text: "Let me look." }], {
      tool_calls: [{ id: "r1", name: "read_file", args: { path: "/mnt/user-data/uploads/b.csv" } }],
    }),
    toolMessage("id,name\n1,x", { tool_call_id: "r1", name: "read_file" }),
    humanMessage("Actually ignore rows with empty names."),
  ];
}

describe("context_mode snapshot", () => {
  it("renders retained history: no system/framework messages, no reasoning, completed calls as history, pending calls omitted", () => {
    const messages = [...parentHistory(), aiMessage("", { tool_calls: [{ id: "pending", name: "task", args: { prompt: "p" } }] })];
    const text = renderParentContextSnapshot({ messages, summary_text: "Earlier: user uploaded a.csv and b.csv." });
    expect(text.startsWith(`<${PARENT_CONTEXT_SNAPSHOT_NAME}>`)).toBe(true);
    expect(text).toContain("Earlier: user uploaded a.csv and b.csv.");
    expect(text).toContain("[user]\nCompare the two CSV files; the second one is authoritative.");
    expect(text).toContain("[user]\nActually ignore rows with empty names.");
    expect(text).toContain("[parent assistant]\nLet me look.");
    expect(text).toContain('[historical tool call by the parent agent, not executed by you] read_file({"path":"/mnt/user-data/uploads/b.csv"})');
    expect(text).toContain("[its result] id,name\n1,x");
    expect(text).not.toContain("PARENT SYSTEM PROMPT");
    expect(text).not.toContain("SECRET CHAIN OF THOUGHT");
    expect(text).not.toContain("system-reminder");
    expect(text).not.toContain("task(");
  });

  it("orders the child's input: own system message, parent_context_snapshot, task; isolated gets only the task", async () => {
    const child = childModel(() => "ok");
    const { agent } = leadHarness({
      lead: [delegate({ id: "s", prompt: "snapshot task", extra: { context_mode: "snapshot" } }, { id: "i", prompt: "isolated task" }), "done"],
      child,
    });
    // seed the parent thread with history, then delegate
    await agent.updateState("snap-1", { messages: parentHistory().slice(1) });
    await agent.invoke({ messages: [humanMessage("now delegate")] }, { threadId: "snap-1" });
    const snapReq = child.requests.find((r) => contentText(r.messages[r.messages.length - 1].content).startsWith("snapshot task"))!;
    const isoReq = child.requests.find((r) => contentText(r.messages[r.messages.length - 1].content).startsWith("isolated task"))!;
    expect(snapReq.messages.map((m) => m.type)).toEqual(["system", "human", "human"]);
    expect(snapReq.messages[1].name).toBe(PARENT_CONTEXT_SNAPSHOT_NAME);
    expect(contentText(snapReq.messages[1].content)).toContain("Actually ignore rows with empty names.");
    expect(contentText(snapReq.messages[1].content)).toContain("[user]\nnow delegate");
    expect(contentText(snapReq.messages[0].content)).toContain("<parent_context_rules>");
    expect(contentText(snapReq.messages[0].content)).not.toContain("PARENT SYSTEM PROMPT");
    expect(isoReq.messages.map((m) => m.type)).toEqual(["system", "human"]);
    expect(contentText(isoReq.messages[0].content)).not.toContain("<parent_context_rules>");
  });

  it("is serialised at dispatch: a later change to the parent's messages does not reach it", () => {
    const messages = parentHistory();
    const text = renderParentContextSnapshot({ messages });
    (messages[2] as { content: string }).content = "MUTATED";
    expect(text).toContain("Compare the two CSV files");
    expect(text).not.toContain("MUTATED");
  });
});
