import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { askClarificationTool } from "../../src/builtins/ask-clarification";
import { MemoryCheckpointStore } from "../../src/checkpoints";
import {
  buildHumanInputResponse,
  DeerFlowClient,
  findClarificationRequest,
  modelsResponseSchema,
  threadResponseSchema,
} from "../../src/client";
import type { ClientStreamEvent } from "../../src/client";
import type { AgentFactory } from "../../src/deerflow-runtime";
import { PathAccessError } from "../../src/errors";
import { createClarificationMiddleware } from "../../src/middlewares/clarification";
import { createAgent } from "../../src/runtime";
import { ScriptedModel } from "../../src/testing";
import type { ScriptStep } from "../../src/testing";
import { tool } from "../../src/tools";
import { uploadDeleteResponseSchema, uploadListResponseSchema, uploadResponseSchema } from "../../src/uploads";

const writeReport = tool({
  name: "write_report",
  description: "writes a report into outputs",
  schema: z.object({ text: z.string() }),
  execute: ({ text }, rt) => {
    rt.writer({ type: "progress", text: "writing" });
    return `wrote ${text.length} chars`;
  },
});

function scriptedFactory(script: ScriptStep[], seen: { builds: number; model?: ScriptedModel } = { builds: 0 }): AgentFactory {
  const model = new ScriptedModel(script);
  seen.model = model;
  return ({ checkpointer }) => {
    seen.builds++;
    return createAgent({
      model,
      tools: [writeReport, askClarificationTool],
      middleware: [createClarificationMiddleware()],
      checkpointer,
      name: "lead_agent",
    });
  };
}

function tmp(): string {
  return mkdtempSync(path.join(tmpdir(), "df-client-"));
}

async function collect(it: AsyncIterable<ClientStreamEvent>): Promise<ClientStreamEvent[]> {
  const out: ClientStreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe("DeerFlowClient streaming", () => {
  it("streams text deltas per id, each tool call and result once, custom events, and usage once per message", async () => {
    const seen = { builds: 0 } as { builds: number; model?: ScriptedModel };
    const client = new DeerFlowClient({
      dataDir: tmp(),
      checkpointer: new MemoryCheckpointStore(),
      agentFactory: scriptedFactory(
        [
          { text: "Let me write it.", toolCalls: [{ name: "write_report", args: { text: "hello" } }], usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } },
          { text: "The report is ready now.", usage: { input_tokens: 20, output_tokens: 7, total_tokens: 27 } },
        ],
        seen,
      ),
    });
    const events = await collect(client.stream("write a report", { threadId: "t-stream" }));
    const tuples = events.filter((e) => e.type === "messages-tuple").map((e) => e.data as Record<string, any>);
    const aiText = new Map<string, string>();
    for (const t of tuples) if (t.type === "ai" && t.content) aiText.set(t.id, (aiText.get(t.id) ?? "") + t.content);
    expect([...aiText.values()]).toEqual(["Let me write it.", "The report is ready now."]);
    // deltas, not one dump: more text events than messages
    expect(tuples.filter((t) => t.type === "ai" && t.content).length).toBeGreaterThan(2);
    const calls = tuples.filter((t) => t.tool_calls);
    expect(calls).toHaveLength(1);
    expect(calls[0].tool_calls).toEqual([{ name: "write_report", args: { text: "hello" }, id: expect.any(String) }]);
    const results = tuples.filter((t) => t.type === "tool");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ type: "tool", content: "wrote 5 chars", name: "write_report", status: "success" });
    expect(events.filter((e) => e.type === "custom").map((e) => e.data)).toEqual([{ type: "progress", text: "writing" }]);
    const values = events.filter((e) => e.type === "values");
    expect(values.length).toBeGreaterThan(0);
    expect(values.at(-1)!.data).toMatchObject({ title: null, artifacts: [] });
    const end = events.at(-1)!;
    expect(end.type).toBe("end");
    expect(end.data).toMatchObject({ usage: { input_tokens: 30, output_tokens: 12, total_tokens: 42 }, thread_id: "t-stream", status: "success" });
    expect(seen.builds).toBe(1);
  });

  it("chat() returns the final text and keeps multi-turn history without re-emitting old messages", async () => {
    const seen = { builds: 0 } as { builds: number; model?: ScriptedModel };
    const client = new DeerFlowClient({ dataDir: tmp(), agentFactory: scriptedFactory(["First answer.", "Second answer."], seen) });
    expect(await client.chat("one", { threadId: "t-multi" })).toBe("First answer.");
    const events = await collect(client.stream("two", { threadId: "t-multi" }));
    const texts = events.filter((e) => e.type === "messages-tuple").map((e) => (e.data as any).content).join("");
    expect(texts).toBe("Second answer.");
    expect((events.at(-1)!.data as any).usage.total_tokens).toBeGreaterThan(0);
    // the model saw the whole conversation on turn two (persisted in SQLite under dataDir)
    expect(seen.model!.requests[1].messages.map((m) => m.type)).toEqual(["human", "ai", "human"]);
    const human = seen.model!.requests[1].messages[2];
    expect(human.additional_kwargs.run_id).toBeTruthy();
    await client.close();
  });

  it("surfaces clarification questions and answers them with a hidden human_input_response", async () => {
    const seen = { builds: 0 } as { builds: number; model?: ScriptedModel };
    const client = new DeerFlowClient({
      dataDir: tmp(),
      checkpointer: new MemoryCheckpointStore(),
      agentFactory: scriptedFactory(
        [{ toolCalls: [{ name: "ask_clarification", args: { question: "Which format?", clarification_type: "approach_choice", options: ["PDF", "Markdown"] } }] }, "Markdown it is."],
        seen,
      ),
    });
    const q = await client.chat("make a doc", { threadId: "t-clar" });
    expect(q).toMatch(/Which format\?/);
    const thread = await client.getThread("t-clar");
    const pending = findClarificationRequest(thread.values.messages as Record<string, unknown>[]);
    expect(pending?.options.map((o) => o.label)).toEqual(["PDF", "Markdown"]);
    const answer = buildHumanInputResponse(pending!, "2");
    expect(answer.text).toBe("Markdown");
    expect(answer.additionalKwargs).toMatchObject({
      hide_from_ui: true,
      human_input_response: { version: 1, kind: "human_input_response", request_id: pending!.request_id, response_kind: "option", option_id: "option-2", value: "Markdown" },
    });
    expect(await client.chat(answer.text, { threadId: "t-clar", additionalKwargs: answer.additionalKwargs })).toBe("Markdown it is.");
    const sent = seen.model!.requests[1].messages.filter((m) => m.type === "human").at(-1)!;
    expect(sent.additional_kwargs.human_input_response).toMatchObject({ request_id: pending!.request_id });
    expect(buildHumanInputResponse(pending!, "something else").additionalKwargs.human_input_response).toMatchObject({ response_kind: "text", value: "something else" });
  });

  it("throws the run's error after streaming what it produced", async () => {
    const client = new DeerFlowClient({
      dataDir: tmp(),
      checkpointer: new MemoryCheckpointStore(),
      agentFactory: scriptedFactory([{ error: { kind: "auth", message: "bad key", status: 401 } }]),
    });
    await expect(client.chat("x", { threadId: "t-err" })).rejects.toThrow(/bad key/);
    const threads = await client.listThreads();
    expect(threads[0]).toMatchObject({ thread_id: "t-err", status: "error" });
  });
});

describe("DeerFlowClient gateway-shaped helpers", () => {
  it("lists and gets threads as ThreadResponse objects", async () => {
    const client = new DeerFlowClient({ dataDir: tmp(), checkpointer: new MemoryCheckpointStore(), agentFactory: scriptedFactory(["a", "b"]) });
    await client.chat("hi", { threadId: "t-a" });
    await new Promise((r) => setTimeout(r, 5));
    await client.chat("hi", { threadId: "t-b" });
    const list = await client.listThreads();
    expect(list.map((t) => t.thread_id)).toEqual(["t-b", "t-a"]);
    for (const t of list) {
      expect(threadResponseSchema.strict().parse(t)).toEqual(t);
      // like POST /api/threads/search: {title} once titled, {} before
      expect(t.values).toEqual({});
      expect(t.interrupts).toEqual({});
    }
    const one = await client.getThread("t-a");
    expect(threadResponseSchema.strict().parse(one)).toEqual(one);
    expect((one.values.messages as any[]).map((m) => m.type)).toEqual(["human", "ai"]);
    expect(one.status).toBe("idle");
    await expect(client.getThread("missing")).rejects.toMatchObject({ status: 404 });
    await expect(client.getThread("../x")).rejects.toThrow(/Invalid thread id/);
  });

  it("uploads, lists, deletes and reads artifacts with the gateway's shapes and limits from config", async () => {
    const dir = tmp();
    const cfg = path.join(dir, "config.yaml");
    writeFileSync(cfg, "config_version: 34\nmodels: []\nsandbox:\n  use: deerflow.sandbox.local:LocalSandboxProvider\nuploads:\n  max_files: 2\n");
    const a = path.join(dir, "a.csv");
    const b = path.join(dir, "b.txt");
    writeFileSync(a, "x,y\n1,2\n");
    writeFileSync(b, "hello");
    const client = new DeerFlowClient({ configPath: cfg, dataDir: path.join(dir, "data"), checkpointer: new MemoryCheckpointStore(), agentFactory: scriptedFactory([]) });
    const up = await client.uploadFiles("t-up", [a, b]);
    expect(uploadResponseSchema.strict().parse(up)).toEqual(up);
    expect(up.files.map((f) => f.virtual_path)).toEqual(["/mnt/user-data/uploads/a.csv", "/mnt/user-data/uploads/b.txt"]);
    await expect(client.uploadFiles("t-up", [a, b, a])).rejects.toMatchObject({ status: 413, code: "upload_too_many_files" });
    const listed = await client.listUploads("t-up");
    expect(uploadListResponseSchema.strict().parse(listed)).toEqual(listed);
    expect(listed.count).toBe(2);
    const art = await client.getArtifact("t-up", "/mnt/user-data/uploads/a.csv");
    expect(art).toEqual({ bytes: Buffer.from("x,y\n1,2\n"), mimeType: "text/csv" });
    const del = await client.deleteUpload("t-up", "a.csv");
    expect(uploadDeleteResponseSchema.strict().parse(del)).toEqual({ success: true, message: "Deleted a.csv" });
    expect((await client.listUploads("t-up")).count).toBe(1);
    const outputs = client.threadPaths("t-up").outputs;
    mkdirSync(outputs, { recursive: true });
    await expect(client.getArtifact("t-up", "/mnt/user-data/outputs/../../../../../etc/passwd")).rejects.toBeInstanceOf(PathAccessError);
    // like the gateway, uploading into a thread does not create it
    expect((await client.listThreads()).map((t) => t.thread_id)).not.toContain("t-up");
  });

  it("lists models in the /api/models shape", async () => {
    const dir = tmp();
    const cfg = path.join(dir, "config.yaml");
    writeFileSync(
      cfg,
      [
        "config_version: 34",
        "models:",
        "  - name: gpt-test",
        "    display_name: GPT Test",
        "    use: langchain_openai:ChatOpenAI",
        "    model: gpt-4o-mini",
        "    api_key: $DF_CLIENT_TEST_KEY",
        "    supports_thinking: true",
        "  - name: plain",
        "    use: openai",
        "    model: m2",
        "sandbox:",
        "  use: deerflow.sandbox.local:LocalSandboxProvider",
        "",
      ].join("\n"),
    );
    process.env.DF_CLIENT_TEST_KEY = "sk-test";
    const client = new DeerFlowClient({ configPath: cfg, dataDir: path.join(dir, "data") });
    const models = client.listModels();
    expect(modelsResponseSchema.strict().parse(models)).toEqual(models);
    expect(models).toEqual({
      models: [
        { name: "gpt-test", model: "gpt-4o-mini", display_name: "GPT Test", description: null, supports_thinking: true, supports_reasoning_effort: false },
        { name: "plain", model: "m2", display_name: null, description: null, supports_thinking: false, supports_reasoning_effort: false },
      ],
      token_usage: { enabled: true },
    });
  });

  it("names the missing config and the fix when no config exists and no factory is injected", () => {
    const dir = tmp();
    const client = new DeerFlowClient({ cwd: dir, dataDir: path.join(dir, "data") });
    expect(() => client.listModels()).toThrow(/No config.yaml found/);
  });
});
