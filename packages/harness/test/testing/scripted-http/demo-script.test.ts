import { describe, expect, it } from "vitest";
import { DEMO_REPORT_PATH, demoReportPath, demoStep } from "../../../src/testing";
import type { HttpScriptedResponse, RecordedLLMRequest } from "../../../src/testing";
import { parseMemoryUpdate } from "../../../src/memory";
import { emptyMemoryDocument } from "../../../src/memory/types";
import { buildUpdaterPrompt, UPDATER_PROMPT_OPENING } from "../../../src/memory/updater-prompt";

const tools = (...names: string[]) => names.map((name) => ({ type: "function", function: { name, parameters: {} } }));
const req = (body: Record<string, unknown>): RecordedLLMRequest => ({ method: "POST", path: "/v1/chat/completions", headers: {}, body, api: "openai" });

describe("demoStep (the scripted demo task)", () => {
  it("walks write_file → present_files → final answer from the request alone (OpenAI wire)", () => {
    const user = { role: "user", content: "--- BEGIN USER INPUT ---\nplan a trip\n--- END USER INPUT ---" };
    const t = tools("write_file", "present_files");
    const first = demoStep(req({ messages: [user], tools: t })) as HttpScriptedResponse;
    expect(first.text).toContain("scripted DeerFlow demo");
    expect(first.toolCalls?.[0].name).toBe("write_file");
    const args = first.toolCalls?.[0].args as { path: string; content: string };
    expect(args.path).toBe(DEMO_REPORT_PATH);
    expect(args.content).toContain("> plan a trip");
    const wrote = [user, { role: "assistant", content: "", tool_calls: [{ id: "a", function: { name: "write_file", arguments: "{}" } }] }, { role: "tool", tool_call_id: "a", content: "OK" }];
    const second = demoStep(req({ messages: wrote, tools: t })) as HttpScriptedResponse;
    expect(second.toolCalls).toEqual([{ name: "present_files", args: { filepaths: [DEMO_REPORT_PATH] } }]);
    const presented = [...wrote, { role: "assistant", content: "", tool_calls: [{ id: "b", function: { name: "present_files", arguments: "{}" } }] }, { role: "tool", tool_call_id: "b", content: "Successfully presented files" }];
    expect(demoStep(req({ messages: presented, tools: t }))).toMatch(/^Done: I wrote `\/mnt\/user-data\/outputs\/deerflow-demo\.md`[\s\S]*scripted[\s\S]*npx deerflow init/);
    // A second user turn starts over, with its own file.
    const next = demoStep(req({ messages: [...presented, { role: "assistant", content: "Done" }, { role: "user", content: "more" }], tools: t })) as HttpScriptedResponse;
    expect((next.toolCalls?.[0].args as { path: string }).path).toBe(demoReportPath(2));
  });

  it("reads the Anthropic wire too (tool_use / tool_result blocks)", () => {
    const body = {
      messages: [
        { role: "user", content: [{ type: "text", text: "hello" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "a", name: "write_file", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: "OK" }] },
      ],
      tools: [{ name: "write_file" }, { name: "present_files" }],
    };
    expect((demoStep(req(body)) as HttpScriptedResponse).toolCalls?.[0].name).toBe("present_files");
  });

  it("says so honestly when write_file is not offered or failed", () => {
    expect(demoStep(req({ messages: [{ role: "user", content: "hi" }], tools: tools("present_files") }))).toMatch(/not offered that tool[\s\S]*npx deerflow init/);
    const failed = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "", tool_calls: [{ id: "a", function: { name: "write_file", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "a", content: "Error: Permission denied" },
    ];
    expect(demoStep(req({ messages: failed, tools: tools("write_file", "present_files") }))).toMatch(/but the tool failed: Error: Permission denied/);
  });
});

describe("demoStep answering the memory updater", () => {
  const prompt = buildUpdaterPrompt({
    memory: emptyMemoryDocument(),
    conversation: "User: plan a trip\nAssistant: Done",
    signals: new Set(),
    staleCandidates: [],
    consolidationGroups: [],
    maxConsolidationGroups: 0,
    validDays: () => 30,
  });

  it("answers the updater's real prompt with an update that parses and changes nothing (OpenAI and Anthropic wire)", () => {
    expect(prompt.system.startsWith(UPDATER_PROMPT_OPENING)).toBe(true);
    const openai = demoStep(req({ messages: [{ role: "system", content: prompt.system }, { role: "user", content: prompt.user }] }));
    const anthropic = demoStep({ ...req({ system: prompt.system, messages: [{ role: "user", content: prompt.user }] }), api: "anthropic" });
    for (const answer of [openai, anthropic]) {
      expect(typeof answer).toBe("string");
      const update = parseMemoryUpdate(answer as string);
      expect(update.newFacts).toEqual([]);
      expect(update.factsToRemove).toEqual([]);
    }
  });

  it("still plays the demo for a chat turn whose user text quotes the updater's opening", () => {
    const step = demoStep(req({ messages: [{ role: "user", content: UPDATER_PROMPT_OPENING }], tools: tools("write_file") })) as HttpScriptedResponse;
    expect(step.toolCalls?.[0].name).toBe("write_file");
  });
});
