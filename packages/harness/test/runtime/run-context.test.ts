import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import { humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import { createAgent, createRunContext, RunSecrets, runSettings } from "../../src/runtime";
import type { AgentMiddleware, RunConfig } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";
import type { RunContext } from "../../src/tools";

const SECRET = "tok-5f4e3d2c1b0a";

describe("createRunContext", () => {
  it("turns DeerFlow's wire names into typed identity, settings and secrets", () => {
    const ctx = createRunContext({
      threadId: "t1",
      runId: "r1",
      context: { user_id: "alice", agent_name: "writer", reasoning_effort: "high", disable_clarification: true, secrets: { API_TOKEN: SECRET, EMPTY: "", NUM: 3 }, channel_name: "slack" },
      configurable: { is_plan_mode: true, reasoning_effort: "low" },
    });
    expect(ctx.identity).toEqual({ threadId: "t1", runId: "r1", userId: "alice", agentName: "writer" });
    // context wins over configurable, as DeerFlow reads them
    expect(ctx.settings).toMatchObject({ reasoningEffort: "high", isPlanMode: true, disableClarification: true });
    expect(ctx.secrets).toBeInstanceOf(RunSecrets);
    expect(ctx.secrets.get("API_TOKEN")).toBe(SECRET);
    expect(ctx.secrets.names()).toEqual(["API_TOKEN"]);
    // the wire names stay for tools written against DeerFlow, and mirror the identity
    expect([ctx.thread_id, ctx.run_id, ctx.user_id, ctx.channel_name]).toEqual(["t1", "r1", "alice", "slack"]);
  });

  it("typed inputs win over the wire names and are not parsed again", () => {
    const ctx = createRunContext({
      threadId: "t",
      runId: "r",
      context: { user_id: "from-request", agent_name: "from-request", reasoning_effort: "not-an-effort", secrets: { A: "wire-value" } },
      identity: { userId: "server-user", agentName: null },
      settings: runSettings({ reasoningEffort: "minimal", userId: "server-user" }),
      secrets: RunSecrets.from({ A: "typed-value" }),
    });
    expect(ctx.identity).toMatchObject({ userId: "server-user", agentName: null });
    expect(ctx.user_id).toBe("server-user");
    expect(ctx.settings.reasoningEffort).toBe("minimal");
    expect(ctx.secrets.get("A")).toBe("typed-value");
  });

  it("defaults: the default user, the lead agent, no secrets, default settings", () => {
    const ctx = createRunContext({ threadId: "t", runId: "r" });
    expect(ctx.identity).toEqual({ threadId: "t", runId: "r", userId: "default", agentName: null });
    expect(ctx.secrets).toBe(RunSecrets.none);
    expect(ctx.settings).toMatchObject({ isPlanMode: false, subagentEnabled: false, maxConcurrentSubagents: 3, disableClarification: false });
  });

  it("an invalid setting in the wire names is a clear validation error", () => {
    expect(() => createRunContext({ threadId: "t", runId: "r", context: { reasoning_effort: "maximum" } })).toThrow(/reasoning_effort/);
  });

  it("secrets never serialise or print with their values", () => {
    const ctx = createRunContext({ threadId: "t", runId: "r", context: { secrets: { API_TOKEN: SECRET } } });
    const json = JSON.stringify(ctx);
    expect(json).not.toContain(SECRET);
    expect(JSON.parse(json).secrets).toEqual({ API_TOKEN: "***" });
    expect(inspect(ctx, { depth: 5 })).not.toContain(SECRET);
    expect(JSON.stringify({ ...ctx })).not.toContain(SECRET);
  });
});

describe("the typed run context in a run", () => {
  it("tools and middlewares get typed identity, settings and secrets; the secret reaches no checkpoint, configurable or metadata", async () => {
    const seen: { tool?: RunContext; hook?: RunContext; config?: RunConfig } = {};
    const probe = tool({
      name: "probe",
      description: "reads the run context",
      schema: z.object({}),
      execute: (_args, rt) => {
        seen.tool = rt.context;
        return `token length ${rt.context.secrets.get("API_TOKEN")?.length ?? 0}`;
      },
    });
    const spy: AgentMiddleware = {
      name: "Spy",
      beforeAgent(_state, runtime) {
        seen.hook = runtime.context;
        seen.config = runtime.config;
      },
    };
    const store = new MemoryCheckpointStore();
    const model = new ScriptedModel([{ toolCalls: [{ name: "probe", args: {} }] }, "done"]);
    const agent = createAgent({ model, tools: [probe], middleware: [spy], checkpointer: store, name: "lead_agent" });
    const res = await agent.invoke(
      { messages: [humanMessage("go")] },
      {
        threadId: "typed-1",
        context: { user_id: "alice", agent_name: "writer", reasoning_effort: "medium", secrets: { API_TOKEN: SECRET } },
        configurable: { thinking_enabled: false },
        metadata: { source: "test" },
      },
    );
    expect(res.status).toBe("success");
    const toolMsg = res.state.messages.find((m): m is ToolMessage => m.type === "tool");
    expect(toolMsg?.content).toBe(`token length ${SECRET.length}`);
    expect(seen.tool?.identity).toMatchObject({ threadId: "typed-1", userId: "alice", agentName: "writer" });
    expect(seen.tool?.settings).toMatchObject({ reasoningEffort: "medium", thinkingEnabled: false });
    // one context object per run: the middleware sees the same typed fields
    expect(seen.hook).toBe(seen.tool);
    expect(JSON.stringify(seen.config)).not.toContain(SECRET);
    const history = await agent.getStateHistory("typed-1");
    expect(history.length).toBeGreaterThan(1);
    expect(JSON.stringify(history)).not.toContain(SECRET);
    expect(JSON.stringify(res.state)).not.toContain(SECRET);
    // what the model was sent does not carry it either
    expect(JSON.stringify(model.requests)).not.toContain(SECRET);
  });

  it("a sub-agent inherits the typed identity, not the request's secrets", async () => {
    let childContext: RunContext | undefined;
    const childProbe = tool({
      name: "child_probe",
      description: "reads the child's context",
      schema: z.object({}),
      execute: (_a, rt) => {
        childContext = rt.context;
        return "ok";
      },
    });
    const child = createAgent({ model: new ScriptedModel([{ toolCalls: [{ name: "child_probe", args: {} }] }, "child done"]), tools: [childProbe], name: "child" });
    const spawn = tool({
      name: "spawn",
      description: "runs the child",
      schema: z.object({}),
      execute: async (_a, rt) => {
        const r = await rt.runChild(child, { messages: [humanMessage("sub")] }, { taskId: rt.toolCallId });
        return r.status;
      },
    });
    const parent = createAgent({ model: new ScriptedModel([{ toolCalls: [{ name: "spawn", args: {}, id: "call-spawn" }] }, "parent done"]), tools: [spawn], name: "lead_agent" });
    const res = await parent.invoke({ messages: [humanMessage("go")] }, { threadId: "typed-2", runId: "parent-run", context: { user_id: "bob", agent_name: "helper", secrets: { API_TOKEN: SECRET } } });
    expect(res.status).toBe("success");
    expect(childContext?.identity).toMatchObject({ threadId: "typed-2", userId: "bob", agentName: "helper" });
    expect(childContext?.identity.runId).not.toBe("parent-run");
    expect(childContext).toMatchObject({ is_subagent: true, parent_run_id: "parent-run", parent_tool_call_id: "call-spawn" });
    expect(childContext?.secrets.size).toBe(0);
  });
});
