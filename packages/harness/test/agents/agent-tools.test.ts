import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCustomAgent, createSetupAgentTool, createUpdateAgentTool, loadCustomAgent } from "../../src/agents";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import type { Message } from "../../src/messages";
import { createAgent } from "../../src/runtime";
import { threadStateSchema } from "../../src/state";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";

let base: string;
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "agent-tools-"));
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

/** Run one scripted turn with the agent tools and return the tool messages' text and status. */
async function runTools(steps: ScriptStep[], context: Record<string, unknown>) {
  const model = new ScriptedModel(steps);
  const opts = { baseDir: base, modelNames: () => ["basic", "smart"] };
  const agent = createAgent({
    model,
    tools: [createSetupAgentTool(opts), createUpdateAgentTool(opts)],
    checkpointer: new MemoryCheckpointStore(),
    stateSchema: threadStateSchema,
  });
  const res = await agent.invoke({ messages: [{ type: "human", content: "go" }] }, { threadId: "t1", context: { user_id: "u1", ...context } });
  return (res.state.messages as Message[]).filter((m) => m.type === "tool").map((m) => ({ text: String(m.content), status: (m as { status?: string }).status }));
}

describe("setup_agent", () => {
  it("persists the agent named by the run's agent_name (bootstrap)", async () => {
    const out = await runTools(
      [{ toolCalls: [{ name: "setup_agent", args: { soul: "# Soul\nBe terse.", description: "A terse helper", skills: [] } }] }, "done"],
      { agent_name: "Terse", is_bootstrap: true },
    );
    expect(out).toEqual([{ text: "Agent 'terse' created successfully!", status: "success" }]);
    expect(loadCustomAgent(base, "u1", "terse")).toMatchObject({ description: "A terse helper", skills: [], soul: "# Soul\nBe terse." });
  });

  it("refuses an empty soul and a missing agent_name as error tool messages", async () => {
    const out = await runTools(
      [{ toolCalls: [{ name: "setup_agent", args: { soul: "  ", description: "x" } }, { name: "setup_agent", args: { soul: "s", description: "x" }, id: "c2" }] }, "done"],
      {},
    );
    expect(out.map((o) => o.status)).toEqual(["error", "error"]);
    expect(out[0].text).toMatch(/^Error: soul content is empty/);
    expect(out[1].text).toMatch(/^Error: setup_agent needs the run's agent_name/);
  });
});

describe("update_agent", () => {
  it("changes only the given fields; 'null'-like strings mean unchanged; keeps API-owned fields", async () => {
    createCustomAgent(base, "u1", { name: "bot", description: "old", tool_groups: ["web"], reasoning_effort: "high", github: { repo: "a/b" } }, "old soul");
    const out = await runTools(
      [{ toolCalls: [{ name: "update_agent", args: { description: "new", soul: "null", skills: "None", model: "smart" } }] }, "ok"],
      { agent_name: "bot" },
    );
    expect(out[0]).toEqual({ text: "Agent 'bot' updated successfully. Changed: description, model. The new configuration takes effect on the next user turn.", status: "success" });
    expect(loadCustomAgent(base, "u1", "bot")).toMatchObject({
      description: "new",
      model: "smart",
      tool_groups: ["web"],
      reasoning_effort: "high",
      github: { repo: "a/b" },
      soul: "old soul",
    });
  });

  it("reports unknown models, no fields, no changes and the github channel", async () => {
    createCustomAgent(base, "u1", { name: "bot", description: "same" }, "soul");
    const out = await runTools(
      [
        {
          toolCalls: [
            { name: "update_agent", args: { model: "nope" }, id: "a" },
            { name: "update_agent", args: { soul: "undefined" }, id: "b" },
            { name: "update_agent", args: { description: "same" }, id: "c" },
          ],
        },
        "ok",
      ],
      { agent_name: "bot" },
    );
    expect(out[0].text).toMatch(/^Error: Unknown model 'nope'/);
    expect(out[1].text).toMatch(/^Error: No fields provided/);
    expect(out[2]).toEqual({ text: "No changes applied to agent 'bot'. The provided values matched the existing config.", status: "success" });
    const gh = await runTools([{ toolCalls: [{ name: "update_agent", args: { description: "x" } }] }, "ok"], { agent_name: "bot", channel_name: "github" });
    expect(gh[0].text).toMatch(/disabled on the 'github' channel/);
    expect(loadCustomAgent(base, "u1", "bot").description).toBe("same");
  });
});
