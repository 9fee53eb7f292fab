import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "../../src/errors";
import { AllowlistProvider } from "../../src/guardrails";
import type { GuardrailProvider, GuardrailRequest } from "../../src/guardrails";
import { humanMessage, toolMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { createGuardrailMiddleware } from "../../src/middlewares/guardrail";
import { createAgent, createRunContext, GraphInterrupt } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import { makeRuntime, toolRequest } from "./_fixtures-guards";

function runner() {
  let executed = 0;
  const handler = async () => {
    executed++;
    return toolMessage("executed", { tool_call_id: "call-1", name: "bash" });
  };
  return { handler, executed: () => executed };
}

describe("GuardrailMiddleware", () => {
  it("requires a provider with evaluate()", () => {
    expect(() => createGuardrailMiddleware({} as never)).toThrow(ConfigError);
    expect(() => createGuardrailMiddleware({ provider: { name: "x" } as never })).toThrow(/provider/);
    expect(createGuardrailMiddleware({ provider: new AllowlistProvider() }).name).toBe("GuardrailMiddleware");
  });

  it("blocks a denied tool before execution with DeerFlow's text", async () => {
    const mw = createGuardrailMiddleware({ provider: new AllowlistProvider({ denied_tools: ["bash"] }) });
    const r = runner();
    const out = (await mw.wrapToolCall!(toolRequest({ name: "bash", id: "call-1", args: { command: "rm -rf /" } }), r.handler)) as ToolMessage;
    expect(r.executed()).toBe(0);
    expect(out).toMatchObject({
      type: "tool",
      status: "error",
      name: "bash",
      tool_call_id: "call-1",
      content: "Guardrail denied: tool 'bash' was blocked (oap.tool_not_allowed). Reason: tool 'bash' is denied. Choose an alternative approach.",
    });
  });

  it("lets allowed tools through", async () => {
    const mw = createGuardrailMiddleware({ provider: new AllowlistProvider({ allowed_tools: ["bash"] }) });
    const r = runner();
    const out = (await mw.wrapToolCall!(toolRequest({ name: "bash" }), r.handler)) as ToolMessage;
    expect(r.executed()).toBe(1);
    expect(out.content).toBe("executed");
  });

  it("passes the run identity to the provider (async evaluate supported)", async () => {
    let seen: GuardrailRequest | undefined;
    const provider: GuardrailProvider = {
      name: "spy",
      async evaluate(req) {
        seen = req;
        return { allow: false, reasons: [], policy_id: "p1" };
      },
    };
    const mw = createGuardrailMiddleware({ provider, passport: "agent-7" });
    const runtime = makeRuntime({
      context: createRunContext({ threadId: "t9", runId: "r9", context: { user_id: "u9", user_role: "admin", is_internal: "yes", authz_attributes: { team: "a" } } }),
    });
    const out = (await mw.wrapToolCall!(toolRequest({ name: "web_search", id: "c7", args: { query: "q" } }, {}, runtime), runner().handler)) as ToolMessage;
    expect(seen).toMatchObject({
      tool_name: "web_search",
      tool_input: { query: "q" },
      agent_id: "agent-7",
      thread_id: "t9",
      run_id: "r9",
      user_id: "u9",
      user_role: "admin",
      tool_call_id: "c7",
      is_internal: false, // only a literal true counts
      authz_attributes: { team: "a" },
    });
    expect(out.content).toBe("Guardrail denied: tool 'web_search' was blocked (oap.denied). Reason: blocked by guardrail policy. Choose an alternative approach.");
  });

  it("a throwing provider blocks the call when fail_closed (default)", async () => {
    const provider: GuardrailProvider = { name: "broken", evaluate: () => { throw new Error("policy server down"); } };
    const r = runner();
    const out = (await createGuardrailMiddleware({ provider }).wrapToolCall!(toolRequest({ name: "bash" }), r.handler)) as ToolMessage;
    expect(r.executed()).toBe(0);
    expect(out.content).toBe(
      "Guardrail denied: tool 'bash' was blocked (oap.evaluator_error). Reason: guardrail provider error (fail-closed). Choose an alternative approach.",
    );
    // a provider returning garbage is treated as an error too
    const garbage: GuardrailProvider = { name: "g", evaluate: () => undefined as never };
    const out2 = (await createGuardrailMiddleware({ provider: garbage }).wrapToolCall!(toolRequest({ name: "bash" }), r.handler)) as ToolMessage;
    expect(out2.status).toBe("error");
    expect(r.executed()).toBe(0);
  });

  it("a throwing provider lets the call through when fail_closed is false", async () => {
    const provider: GuardrailProvider = { name: "broken", evaluate: async () => { throw new Error("down"); } };
    const r = runner();
    const out = (await createGuardrailMiddleware({ provider, fail_closed: false }).wrapToolCall!(toolRequest({ name: "bash" }), r.handler)) as ToolMessage;
    expect(r.executed()).toBe(1);
    expect(out.content).toBe("executed");
  });

  it("propagates an interrupt raised by the provider", async () => {
    const provider: GuardrailProvider = { name: "hitl", evaluate: () => { throw new GraphInterrupt("approve?"); } };
    await expect(createGuardrailMiddleware({ provider }).wrapToolCall!(toolRequest({ name: "bash" }), runner().handler)).rejects.toThrow(GraphInterrupt);
  });

  it("full agent run: the denied tool never executes and the model sees the denial", async () => {
    let ran = 0;
    const bash = tool({ name: "bash", description: "run", schema: z.object({ command: z.string() }), execute: () => { ran++; return "ran"; } });
    const model = new ScriptedModel([{ toolCalls: [{ name: "bash", args: { command: "ls" } }] }, "ok, I'll do it differently"]);
    const agent = createAgent({ model, tools: [bash], middleware: [createGuardrailMiddleware({ provider: new AllowlistProvider({ denied_tools: ["bash", "write_file"] }) })] });
    const r = await agent.invoke({ messages: [humanMessage("list files")] }, { threadId: "gr-1" });
    expect(ran).toBe(0);
    expect(r.status).toBe("success");
    const t = model.requests[1].messages.find((m) => m.type === "tool") as ToolMessage;
    expect(t.status).toBe("error");
    expect(t.content).toMatch(/^Guardrail denied: tool 'bash' was blocked \(oap\.tool_not_allowed\)/);
  });
});
