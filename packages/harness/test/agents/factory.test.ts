import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createDeerflowAgent } from "../../src/agents";
import type { AgentMiddleware } from "../../src/runtime";
import { humanMessage } from "../../src/messages";
import { LocalSandboxProvider, parseSandboxConfig } from "../../src/sandbox";
import { ScriptedModel } from "../../src/testing";
import { createSummarizationMiddleware } from "../../src/middlewares";

const baseDir = mkdtempSync(join(tmpdir(), "df-factory-"));
const provider = new LocalSandboxProvider(parseSandboxConfig({}), { baseDir });
const mw = (name: string): AgentMiddleware => ({ name });

describe("createDeerflowAgent", () => {
  it("assembles DeerFlow's feature chain in order with Clarification last", () => {
    const a = createDeerflowAgent(new ScriptedModel([]), [], { baseDir, sandboxProvider: provider, planMode: true, features: { auto_title: true, token_budget: true } });
    expect(a.middleware.map((m) => m.name)).toEqual([
      "ThreadDataMiddleware", "UploadsMiddleware", "SandboxMiddleware", "DanglingToolCallMiddleware", "ToolErrorHandlingMiddleware",
      "TodoMiddleware", "TitleMiddleware", "LoopDetectionMiddleware", "TokenBudgetMiddleware", "ClarificationMiddleware",
    ]);
    expect(a.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["ask_clarification", "write_todos"]));
  });

  it("places extras before Clarification or at anchors, and rejects conflicts", () => {
    const a = createDeerflowAgent(new ScriptedModel([]), [], {
      baseDir, sandboxProvider: provider,
      extraMiddleware: [mw("Plain"), { middleware: mw("AfterSandbox"), after: "SandboxMiddleware" }, { middleware: mw("BeforeLoop"), before: "LoopDetectionMiddleware" }],
    });
    const names = a.middleware.map((m) => m.name);
    expect(names.indexOf("AfterSandbox")).toBe(names.indexOf("SandboxMiddleware") + 1);
    expect(names.indexOf("BeforeLoop")).toBe(names.indexOf("LoopDetectionMiddleware") - 1);
    expect(names.at(-2)).toBe("Plain");
    expect(names.at(-1)).toBe("ClarificationMiddleware");
    expect(() => createDeerflowAgent(new ScriptedModel([]), [], { baseDir, sandboxProvider: provider, extraMiddleware: [{ middleware: mw("X"), after: "SandboxMiddleware" }, { middleware: mw("Y"), after: "SandboxMiddleware" }] })).toThrow(/conflict/);
    expect(() => createDeerflowAgent(new ScriptedModel([]), [], { baseDir, sandboxProvider: provider, extraMiddleware: [{ middleware: mw("X"), after: "Nope" }] })).toThrow(/anchor 'Nope'/);
  });

  it("enforces DeerFlow's factory rules", () => {
    const m = new ScriptedModel([]);
    expect(() => createDeerflowAgent(m, [], { middleware: [], features: {} })).toThrow(/full takeover/);
    expect(() => createDeerflowAgent(m, [], { features: { summarization: true as never } })).toThrow(/needs a middleware instance/);
    expect(() => createDeerflowAgent(m, [], { features: { guardrail: true as never } })).toThrow(/needs a middleware instance/);
    const s = createSummarizationMiddleware({ enabled: true });
    expect(createDeerflowAgent(m, [], { baseDir, sandboxProvider: provider, features: { summarization: s } }).middleware).toContain(s);
    expect(createDeerflowAgent(m, [], { middleware: [mw("Only")] }).middleware.map((x) => x.name)).toEqual(["Only"]);
  });

  it("user tools win over feature tools and a run works end to end", async () => {
    const { tool } = await import("../../src/tools");
    const { z } = await import("zod");
    const mine = tool({ name: "ask_clarification", description: "mine", schema: z.object({}), execute: () => "custom" });
    const model = new ScriptedModel(["hello there"]);
    const a = createDeerflowAgent(model, [mine], { baseDir, sandboxProvider: provider });
    expect(a.tools.filter((t) => t.name === "ask_clarification")).toEqual([mine]);
    const r = await a.invoke({ messages: [humanMessage("hi")] }, { threadId: "fac1" });
    expect(r.status).toBe("success");
    expect(r.state.thread_data).toBeTruthy();
  });
});
