import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage, toolMessage } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { z } from "zod";
import { createTerminalResponseMiddleware, TERMINAL_FALLBACK_CONTENT, TERMINAL_RECOVERY_PROMPT } from "../../src/middlewares/terminal-response";
import { callAI, leadRuntime, leadState, wrapModel } from "./_fixtures-lead";

describe("TerminalResponseMiddleware", () => {
  const afterTool = (final = aiMessage("", { id: "final" })) =>
    leadState([humanMessage("q"), callAI([{ name: "t", id: "c1" }]), toolMessage("r", { tool_call_id: "c1" }), final]);

  it("ignores non-empty answers, tool intent, and turns without a tool result", async () => {
    const mw = createTerminalResponseMiddleware();
    const rt = leadRuntime();
    expect(await mw.afterModel!(afterTool(aiMessage("fine")), rt)).toBeUndefined();
    expect(await mw.afterModel!(afterTool(callAI([{ name: "t" }])), rt)).toBeUndefined();
    expect(await mw.afterModel!(leadState([humanMessage("q"), aiMessage("")]), rt)).toBeUndefined();
  });

  it("retries once with the recovery prompt, then writes the error fallback", async () => {
    const mw = createTerminalResponseMiddleware();
    const rt = leadRuntime();
    await mw.beforeAgent!(leadState([]), rt);
    const first = (await mw.afterModel!(afterTool(), rt)) as any;
    expect(first.jumpTo).toBe("model");
    expect(first.messages).toEqual([{ type: "remove", id: "final" }]);
    const w = await wrapModel(mw, leadState([]), rt);
    expect(w.seen[0].messages.at(-1)).toMatchObject({ type: "human", name: "terminal_response_recovery", content: TERMINAL_RECOVERY_PROMPT, additional_kwargs: { hide_from_ui: true } });
    expect((await wrapModel(mw, leadState([]), rt)).seen[0].messages).toHaveLength(0);
    const second = (await mw.afterModel!(afterTool(aiMessage("  ", { id: "f2" })), rt)) as any;
    expect(second.jumpTo).toBeUndefined();
    expect(second.messages[0]).toMatchObject({ id: "f2", content: TERMINAL_FALLBACK_CONTENT, additional_kwargs: { deerflow_error_fallback: true } });
    expect(rt.outcome.error).toMatchObject({ type: "empty_terminal_response" });
  });

  it("full run: empty answer → retry with reminder → visible answer; empty message not persisted", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "t", args: {} }] }, "", "Here is the answer."]);
    const t = tool({ name: "t", description: "t", schema: z.object({}), execute: () => "result" });
    const agent = createAgent({ model, tools: [t], middleware: [createTerminalResponseMiddleware()] });
    const res = await agent.invoke({ messages: [humanMessage("q")] }, { threadId: "tr1" });
    expect(model.callCount).toBe(3);
    expect(model.requests[2].messages.at(-1)!.content).toBe(TERMINAL_RECOVERY_PROMPT);
    expect(res.state.messages.at(-1)!.content).toBe("Here is the answer.");
    expect(res.state.messages.filter((m) => m.type === "ai")).toHaveLength(2);
  });
});
