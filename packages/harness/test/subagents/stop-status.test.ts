import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLeadAgentFactory } from "../../src/agents";
import { appConfigFromText } from "../../src/config";
import { humanMessage } from "../../src/messages";
import type { ToolMessage } from "../../src/messages";
import type { ModelRequest } from "../../src/models";
import { ScriptedModel } from "../../src/testing";

const home = mkdtempSync(join(tmpdir(), "df-sub-stop-"));
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
sandbox:
  use: local
`;

describe("stopping a run while its sub-agents work", () => {
  it("stores each delegation's result as cancelled (the status the CLI and the UI show), not a missing result", async () => {
    const stop = new AbortController();
    const model = new ScriptedModel(
      [
        (req: ModelRequest) => {
          if (req.tools.some((t) => t.name === "task")) {
            return { toolCalls: ["a", "b"].map((w) => ({ id: `t_${w}`, name: "task", args: { description: `Research ${w}`, prompt: `look into ${w}`, subagent_type: "general-purpose" } })) };
          }
          // A child is working: the user presses Stop now; its model call would take a minute.
          setImmediate(() => stop.abort(new Error("Cancelled by user")));
          return { delayMs: 60_000, text: "never" };
        },
      ],
      { onExhausted: "repeat-last" },
    );
    const { config } = appConfigFromText(CONFIG);
    const f = createLeadAgentFactory({
      config,
      baseDir: home,
      modelFactory: () => ({ model, warnings: [], config: { name: "scripted", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never }),
      warn: () => {},
    });
    const agent = await f.makeLeadAgent({ subagentEnabled: true, threadId: "stop-1" });
    const res = await agent.invoke({ messages: [humanMessage("research both")] }, { threadId: "stop-1", signal: stop.signal });
    expect(res.status).toBe("cancelled");
    const stored = await agent.getState("stop-1");
    const results = (stored?.values.messages ?? []).filter((m) => m.type === "tool" && m.name === "task") as ToolMessage[];
    expect(results.map((m) => m.tool_call_id).sort()).toEqual(["t_a", "t_b"]);
    for (const m of results) {
      expect(m.additional_kwargs?.subagent_status).toBe("cancelled");
      expect(m.status).toBe("error");
    }
    await f.close();
  });
});
