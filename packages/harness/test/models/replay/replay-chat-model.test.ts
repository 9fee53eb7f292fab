import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { aiMessage, humanMessage, systemMessage, toolMessage } from "../../../src/messages";
import { collectModelStream, createChatModel } from "../../../src/models";
import {
  buildReplayFixture,
  canonicalReplayConversation,
  createRecordingChatModel,
  normalizeReplayCaller,
  normalizeReplayText,
  pythonJsonDumps,
  ReplayChatModel,
  replayConversationHash,
  replayInputKey,
  replayTurnOf,
} from "../../../src/models/replay";
import type { ReplayTurn } from "../../../src/models/replay";
import { ScriptedModel } from "../../../src/testing";

const DEERFLOW_FIXTURE = path.resolve(__dirname, "../../../../../../shared/deerflow-src/backend/tests/fixtures/replay/write_read_file.ultra.json");
if (!fs.existsSync(DEERFLOW_FIXTURE)) console.warn(`[replay] SKIPPING the checks against DeerFlow's recorded fixture: ${DEERFLOW_FIXTURE} is absent`);

function tmpFixture(turns: ReplayTurn[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "replay-"));
  const file = path.join(dir, "fixture.json");
  fs.writeFileSync(file, JSON.stringify(buildReplayFixture({ scenario: "unit", mode: "flash", model: "unit-model", prompt: "hi" }, turns)));
  return file;
}

describe("pythonJsonDumps", () => {
  it("writes what json.dumps(sort_keys=True, ensure_ascii=False) writes", () => {
    expect(pythonJsonDumps({ b: 1, a: [true, null, "x"], c: {} })).toBe('{"a": [true, null, "x"], "b": 1, "c": {}}');
    expect(pythonJsonDumps("é — \u2028 \"q\" \\ \n\t\u0001")).toBe('"é — \u2028 \\"q\\" \\\\ \\n\\t\\u0001"');
    expect(pythonJsonDumps([0.5, 1e-5, 2.5e-7, -2.25, 123456.789, 2 ** 60])).toBe("[0.5, 1e-05, 2.5e-07, -2.25, 123456.789, 1152921504606846976]");
    // keys in code-point order: an astral character sorts after U+FFFF-range ones as in Python
    expect(pythonJsonDumps({ "\u{1F600}": 1, "\uFF21": 2 })).toBe('{"\uFF21": 2, "\u{1F600}": 1}');
  });
});

describe("the replay key", () => {
  it("drops system and hidden messages, normalises volatile text and keeps tool calls by name and arguments", () => {
    const messages = [
      systemMessage("a long system prompt"),
      humanMessage("<system-reminder>\n<current_date>2026-12-02, Wednesday</current_date>\n</system-reminder>", { additional_kwargs: { hide_from_ui: true } }),
      humanMessage("--- BEGIN USER INPUT ---\nopen /tmp/abc/x.txt at 2026-12-02T10:00:00Z for 0b5af92b-3d7a-4a45-9c1e-0123456789ab\n--- END USER INPUT ---"),
      aiMessage("", { tool_calls: [{ id: "call_1", name: "read_file", args: { path: "/mnt/user-data/x" } }] }),
      toolMessage("contents", { tool_call_id: "call_1", name: "read_file" }),
    ];
    expect(canonicalReplayConversation(messages)).toBe(
      '[{"content": "open <PATH> at <TS> for <UUID>", "type": "human"}, {"content": "", "tool_calls": [{"args": {"path": "/mnt/user-data/x"}, "name": "read_file"}], "type": "ai"}, {"content": "contents", "name": "read_file", "type": "tool"}]',
    );
    expect(normalizeReplayText("User: \nUser: hello\nAssistant:   \n")).toBe("User: hello\n");
    expect(normalizeReplayCaller(undefined)).toBe("lead_agent");
    expect(normalizeReplayCaller(" title_agent ")).toBe("middleware:title");
  });

  it.skipIf(!fs.existsSync(DEERFLOW_FIXTURE))("reproduces the hashes of DeerFlow's recorded suggestion call", () => {
    const fixture = JSON.parse(fs.readFileSync(DEERFLOW_FIXTURE, "utf8")) as { prompt: string; turns: ReplayTurn[] };
    const suggest = fixture.turns.find((t) => t.caller === "suggest_agent")!;
    const messages = [
      systemMessage("You are generating follow-up questions…"),
      humanMessage(`Conversation Context:\nUser: ${fixture.prompt}\nAssistant: hi from replay.\n\nGenerate 3 follow-up questions`),
    ];
    expect(replayConversationHash(messages)).toBe(suggest.conversation_hash);
    expect(replayInputKey(suggest.conversation_hash!, "suggest_agent")).toBe(suggest.input_hash);
    for (const t of fixture.turns) expect(replayInputKey(t.conversation_hash!, t.caller)).toBe(t.input_hash);
  });
});

describe("ReplayChatModel", () => {
  it("answers each call from the turn recorded for its caller and conversation, tool calls included", async () => {
    const msgs = [humanMessage("same conversation")];
    const lead = replayTurnOf({ messages: msgs }, aiMessage("", { id: "m1", tool_calls: [{ id: "c1", name: "ls", args: { path: "/" } }] }));
    const suggest = replayTurnOf({ messages: msgs, caller: "suggest_agent" }, aiMessage('["a?", "b?"]', { id: "m2" }));
    const model = new ReplayChatModel({ fixture: tmpFixture([lead, suggest]) });
    const s = await collectModelStream(model.stream({ messages: msgs, tools: [], caller: "suggest_agent" }));
    expect(s.content).toBe('["a?", "b?"]');
    const l = await collectModelStream(model.stream({ messages: [systemMessage("prompt edits do not matter"), ...msgs], tools: [] }));
    expect(l.tool_calls).toEqual([expect.objectContaining({ id: "c1", name: "ls", args: { path: "/" } })]);
    expect(model.modelName).toBe("unit-model");
  });

  it("fails loudly on a miss, naming the hash and the normalised input, and records it", async () => {
    const model = new ReplayChatModel({ fixture: tmpFixture([]) });
    await expect(collectModelStream(model.stream({ messages: [humanMessage("never recorded")], tools: [] }))).rejects.toThrow(/Replay miss: .*caller "lead_agent".*never recorded/);
    expect(model.misses).toEqual([expect.objectContaining({ caller: "lead_agent", conversation: '[{"content": "never recorded", "type": "human"}]' })]);
  });

  it("is selected by models[].use with a fixture path, and a missing fixture is a clear config error", () => {
    const fixture = tmpFixture([]);
    const made = createChatModel({ models: [{ name: "r", use: "replay_provider:ReplayChatModel", model: "replay", fixture } as never] }, "r", { env: {} });
    expect(made.model).toBeInstanceOf(ReplayChatModel);
    expect(made.config.provider).toBe("replay");
    expect(() => createChatModel({ models: [{ name: "r", use: "replay", model: "replay" } as never] }, "r", { env: {} })).toThrow(/names no fixture: set `fixture: /);
    expect(() => new ReplayChatModel({ fixture: `${fixture}.missing` })).toThrow(/cannot be read/);
  });

  it("replays what the recording wrapper recorded", async () => {
    const turns: ReplayTurn[] = [];
    const scripted = new ScriptedModel(["recorded answer"]);
    const recording = createRecordingChatModel(scripted, (t) => turns.push(t));
    const messages = [humanMessage("record me")];
    expect((await collectModelStream(recording.stream({ messages, tools: [], caller: "middleware:title" }))).content).toBe("recorded answer");
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ caller: "middleware:title", output: { type: "ai", data: { content: "recorded answer" } } });
    const replay = new ReplayChatModel({ fixture: tmpFixture(turns) });
    expect((await collectModelStream(replay.stream({ messages, tools: [], caller: "middleware:title" }))).content).toBe("recorded answer");
  });
});
