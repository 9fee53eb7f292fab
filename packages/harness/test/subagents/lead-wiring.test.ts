import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLeadAgentFactory } from "../../src/agents";
import { appConfigFromText } from "../../src/config";
import { contentText, humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import type { ModelRequest } from "../../src/models";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";
import { taskText, turnOf } from "./_fixtures";

const home = mkdtempSync(join(tmpdir(), "df-sub-lead-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

const CONFIG = `
config_version: 34
models:
  - name: scripted
    use: openai-compatible
    model: scripted
    base_url: http://127.0.0.1:9/v1
    api_key: test
tools:
  - { name: ls, group: file:read, use: deerflow.sandbox.tools:ls_tool }
  - { name: read_file, group: file:read, use: deerflow.sandbox.tools:read_file_tool }
  - { name: write_file, group: file:write, use: deerflow.sandbox.tools:write_file_tool }
sandbox:
  use: local
subagents:
  max_total_per_run: 5
`;

const OUT = "/mnt/user-data/outputs/data.json";

/** One model for lead and children (`inherit`): routed by whether the request offers `task`. */
function routedModel(lead: ScriptStep[]): ScriptedModel {
  let leadTurn = 0;
  return new ScriptedModel(
    [
      (req: ModelRequest) => {
        if (req.tools.some((t) => t.name === "task")) return lead[leadTurn++] ?? "done";
        return turnOf(req) === 0
          ? { toolCalls: [{ name: "write_file", args: { description: "save", path: OUT, content: '{"ok": true}' } }], usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } }
          : { text: taskText(req).includes("save the data") ? "saved the data" : "wrong task", usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } };
      },
    ],
    { onExhausted: "repeat-last" },
  );
}

function factory(model: ScriptedModel) {
  const { config } = appConfigFromText(CONFIG);
  return createLeadAgentFactory({
    config,
    baseDir: home,
    modelFactory: () => ({ model, warnings: [], config: { name: "scripted", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never }),
    warn: () => {},
  });
}

describe("lead agent with subagent_enabled", () => {
  it("offers task only in ultra mode, with the sub-agent prompt section (bash hidden on the local provider)", async () => {
    const f = factory(routedModel([]));
    const plain = await f.makeLeadAgent({});
    expect(plain.tools.map((t) => t.name)).not.toContain("task");
    const ultra = await f.makeLeadAgent({ subagentEnabled: true, maxConcurrentSubagents: 2 });
    expect(ultra.tools.map((t) => t.name)).toContain("task");
    expect(ultra.middleware.map((m) => m.name)).toEqual(expect.arrayContaining(["DurableContextMiddleware", "SubagentLimitMiddleware"]));
    const task = ultra.tools.find((t) => t.name === "task")!;
    expect(task.description).toContain("- general-purpose:");
    expect(task.description).not.toContain("- bash:");
    await f.close();
  });

  it("delegates through the real lead chain: child tools, sandbox writes, checklist, usage and ledger", async () => {
    const model = routedModel([
      {
        toolCalls: [
          { id: "d1", name: "task", args: { description: "save data", prompt: "save the data", subagent_type: "general-purpose", acceptance_criteria: [`file:${OUT} json-valid`] } },
        ],
      },
      "All saved.",
    ]);
    const f = factory(model);
    const agent = await f.makeLeadAgent({ subagentEnabled: true, threadId: "wire-1" });
    const res = await agent.invoke({ messages: [humanMessage("please save")] }, { threadId: "wire-1" });
    expect(res.status).toBe("success");
    const tm = res.state.messages.find((m) => m.type === "tool" && m.name === "task") as ToolMessage;
    expect(contentText(tm.content)).toBe(
      `Task Succeeded. Result: saved the data\n\nAcceptance checklist (deterministic checks; execution evidence only, does not validate claim correctness):\n- [holds] file:${OUT} json-valid — parses as JSON`,
    );
    expect(res.outcome.usageByCaller["subagent:general-purpose"]).toMatchObject({ total_tokens: 20, calls: 1 });
    expect(res.state.delegations).toMatchObject([{ id: "d1", status: "completed", run_id: res.state.delegations[0].run_id }]);
    const childReq = model.requests.find((r) => !r.tools.some((t) => t.name === "task"))!;
    expect(childReq.tools.map((t) => t.name).sort()).toEqual(["ls", "read_file", "write_file"]);
    expect(contentText(childReq.messages[0].content)).toContain("You are a general-purpose sub-agent.");
    expect(contentText(childReq.messages[0].content)).not.toContain("<subagent_system>");
    const leadReq = model.requests.find((r) => r.tools.some((t) => t.name === "task"))!;
    expect(contentText(leadReq.messages[0].content)).toContain("<subagent_system>");
    expect(contentText(leadReq.messages[0].content)).toContain("max 5 per run");
    // the lead is told that `completed` does not mean the criteria hold
    expect(contentText(leadReq.messages[0].content)).toContain('Repair what "does not hold"');
    expect(contentText(leadReq.messages[0].content)).toContain('verify what is "UNVERIFIED"');
    // both runs gave their sandbox leases back
    expect(f.sandboxProvider.leaseCount("local:default:wire-1")).toBe(0);
    await f.close();
  });
});
