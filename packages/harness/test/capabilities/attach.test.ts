import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { afterAll, describe, expect, it } from "vitest";
import { createLeadAgentFactory } from "../../src/agents";
import { attachCapabilities, LEAD_CAPABILITIES, SLOT } from "../../src/capabilities";
import type { Capability, CapabilityRunHook } from "../../src/capabilities";
import { appConfigFromText } from "../../src/config";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { contentText, humanMessage } from "../../src/messages";
import { ScriptedModel } from "../../src/testing";
import { tool } from "../../src/tools";

const home = mkdtempSync(path.join(tmpdir(), "df-cap-attach-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function host() {
  const events: string[] = [];
  const hooks: CapabilityRunHook[] = [];
  const closes: Array<() => void | Promise<void>> = [];
  const deleted: Array<(t: string, u: string) => void | Promise<void>> = [];
  return {
    events,
    hooks,
    closes,
    deleted,
    runtime: {
      dataDir: home,
      configManager: undefined,
      config: () => undefined,
      invalidateAgents: () => void events.push("invalidate"),
      extensions: {} as Record<string, unknown>,
      recorder: { addHook: (h: CapabilityRunHook) => void hooks.push(h) },
      onClose: (h: () => void | Promise<void>) => void closes.push(h),
      onThreadDeleted: (h: (t: string, u: string) => void | Promise<void>) => void deleted.push(h),
    },
  };
}

describe("attaching capabilities in one loop", () => {
  it("stores each service under its name and registers its run hooks, thread cleanup and close; a failing one is off with one log line", async () => {
    const h = host();
    const logs: string[] = [];
    const ledger: Capability<{ id: string }, "ledger"> = {
      name: "ledger",
      attach: () => ({
        service: { id: "svc" },
        runHooks: [{ name: "ledger", runStarted: ({ userId }) => void h.events.push(`started:${userId}`) }],
        threadDeleted: (threadId) => void h.events.push(`forget:${threadId}`),
        close: () => void h.events.push("closed"),
      }),
    };
    const broken: Capability<string, "broken"> = {
      name: "broken",
      attach: () => {
        throw new Error("no disk");
      },
    };
    const off: Capability<string, "off"> = { name: "off", attach: () => undefined };
    const attached = attachCapabilities(h.runtime, [broken, ledger, off], { cwd: home, log: (m) => logs.push(m) });
    expect(attached).toEqual(["ledger"]);
    expect(h.runtime.extensions).toEqual({ ledger: { id: "svc" } });
    expect(logs).toEqual(["[deerflow] broken is off: no disk"]);
    await h.hooks[0].runStarted!({ runId: "r", threadId: "t", userId: "u1" });
    await h.deleted[0]("t1", "u1");
    await h.closes[0]();
    expect(h.events).toEqual(["started:u1", "forget:t1", "closed"]);
  });

  it("a DeerFlowRuntime attaches skills, MCP and memory through the loop (memory off by config stays absent)", async () => {
    const base = ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox: { use: local }"];
    const on = await DeerFlowRuntime.open({ config: appConfigFromText(base.join("\n")).config, dataDir: path.join(home, "on"), log: () => undefined });
    const off = await DeerFlowRuntime.open({ config: appConfigFromText([...base, "memory: { enabled: false }"].join("\n")).config, dataDir: path.join(home, "off"), log: () => undefined });
    try {
      expect(Object.keys(on.extensions).sort()).toEqual(["mcp", "memory", "skills"]);
      expect(Object.keys(off.extensions).sort()).toEqual(["mcp", "skills"]);
      expect(LEAD_CAPABILITIES.map((c) => c.name)).toEqual(["web_research", "memory", "mcp", "subagents", "skills"]);
    } finally {
      await on.close();
      await off.close();
    }
  });
});

describe("a capability plugged into the lead agent factory", () => {
  it("adds its tool, its middleware in its slot and its prompt section without the factory naming it", async () => {
    const probe = tool({ name: "probe", description: "Probe.", schema: z.object({}), execute: () => "ok" });
    const seen: string[] = [];
    const custom: Capability<never, "probe"> = {
      name: "probe",
      forAgent: (ctx) => ({
        tools: [probe],
        middlewares: (form) => {
          seen.push(form.subagent ? "sub-agent" : "lead");
          return [{ slot: SLOT.Custom, middleware: { name: "ProbeMiddleware" } }];
        },
        promptSections: (tools) => ({ deferredTools: tools.some((t) => t.name === "probe") && ctx.settings.userId === "u1" ? ["probe"] : [] }),
      }),
    };
    const model = new ScriptedModel(["hi"], { onExhausted: "repeat-last" });
    const factory = createLeadAgentFactory({
      config: appConfigFromText("models: []\nsandbox: { use: local }\ntoken_budget: { enabled: true }\n").config,
      baseDir: home,
      capabilities: [...LEAD_CAPABILITIES, custom],
      modelFactory: () => ({ model, warnings: [], config: { name: "scripted", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never }),
      warn: () => undefined,
    });
    const agent = await factory.makeLeadAgent({ userId: "u1" });
    const names = agent.middleware.map((m) => m.name);
    expect(names.indexOf("ProbeMiddleware")).toBe(names.indexOf("TokenBudgetMiddleware") + 1);
    expect(agent.tools.map((t) => t.name)).toContain("probe");
    expect(seen).toEqual(["lead"]);
    await agent.invoke({ messages: [humanMessage("hello")] }, { configurable: { thread_id: "t-probe" }, context: { user_id: "u1" } } as never);
    expect(contentText(model.requests[0]!.messages[0]!.content)).toContain("<available-deferred-tools>\nThese tools exist but their schemas are not loaded. Call `tool_search` (e.g. \"select:name\") to load them before use:\n- probe\n");
    await factory.close();
  });
});
