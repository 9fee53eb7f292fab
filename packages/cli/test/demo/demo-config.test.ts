import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeadAgentFactory } from "@deerflow-ts/harness/agents";
import { humanMessage, messageText } from "@deerflow-ts/harness/messages";
import type { AIMessage, ToolMessage } from "@deerflow-ts/harness/messages";
import { demoReportPath } from "@deerflow-ts/harness/testing";
import { startDemoModel } from "../../src/demo/demo-config";
import type { DemoModel } from "../../src/demo/demo-config";

describe("demo mode: the scripted demo task through the real lead agent and the scripted HTTP model", { timeout: 60_000 }, () => {
  let demo: DemoModel;
  const home = mkdtempSync(path.join(tmpdir(), "df-demo-"));
  beforeAll(async () => {
    demo = await startDemoModel();
  });
  afterAll(async () => {
    await demo.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("for any message, in any thread, every time: says it is scripted, writes and presents a report, then answers", async () => {
    const factory = createLeadAgentFactory({ config: demo.config, baseDir: home, warn: () => {} });
    const agent = await factory.makeLeadAgent({});
    expect(agent.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["ls", "read_file", "write_file", "str_replace", "present_files"]));
    const runs: Array<[string, string, number]> = [
      ["t-one", "What is the weather in Paris?", 1],
      ["t-two", "写一首诗", 1],
      ["t-one", "And again, please", 2],
    ];
    for (const [threadId, text, turnNo] of runs) {
      const file = demoReportPath(turnNo);
      const before = demo.server.requests.length;
      const r = await agent.invoke({ messages: [humanMessage(text)] }, { threadId });
      expect(r.status).toBe("success");
      const turn = r.state.messages.slice(r.state.messages.findLastIndex((m) => m.type === "human"));
      const ais = turn.filter((m) => m.type === "ai") as AIMessage[];
      expect(messageText(ais[0])).toContain("scripted DeerFlow demo");
      expect(ais[0].tool_calls?.[0]).toMatchObject({ name: "write_file", args: { path: file } });
      expect(ais[1].tool_calls?.[0]).toMatchObject({ name: "present_files", args: { filepaths: [file] } });
      const tools = turn.filter((m) => m.type === "tool") as ToolMessage[];
      expect(tools.map((t) => [t.name, messageText(t)])).toEqual([
        ["write_file", "OK"],
        ["present_files", expect.any(String)],
      ]);
      expect(messageText(ais.at(-1)!)).toContain("scripted");
      expect(messageText(ais.at(-1)!)).toContain("npx deerflow init");
      expect(r.state.artifacts).toContain(file);
      const host = path.join(home, "users", "default", "threads", threadId, "user-data", "outputs", path.basename(file));
      const report = readFileSync(host, "utf8");
      expect(report).toContain("# DeerFlow demo report");
      expect(report).toContain(`> ${text}`);
      expect(report).toContain("not an LLM");
      // Three model calls per turn: write, present, answer.
      expect(demo.server.requests.length - before).toBeGreaterThanOrEqual(3);
    }
  });
});
