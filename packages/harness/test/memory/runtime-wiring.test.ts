import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { appConfigFromText } from "../../src/config";
import { DeerFlowRuntime } from "../../src/deerflow-runtime";
import { contentText } from "../../src/messages";
import type { ModelRequest } from "../../src/models";
import { ScriptedModel } from "../../src/testing";
import { proposedFact, updaterJson } from "./_helpers";

const CONFIG = ["models:", "  - { name: m1, use: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1, api_key: k }", "sandbox:", "  use: local", "memory:", "  backend_config:", "    debounce_seconds: 60", ""].join("\n");

const isUpdater = (r: ModelRequest) => contentText(r.messages[0]?.content ?? "").includes("long-term memory of an assistant");
const text = (r: ModelRequest) => r.messages.map((m) => contentText(m.content)).join("\n");

describe("memory wired into DeerFlowRuntime (lead agent chain, client, close)", () => {
  it("learns after a run, flushes on close, and injects the fact relevant to a new thread's question", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "df-memory-"));
    const model = new ScriptedModel(
      [
        (req) => (isUpdater(req) ? updaterJson({ newFacts: [proposedFact("User is allergic to peanuts", { category: "context", confidence: 0.95 })], threadSummary: "User mentioned a peanut allergy while planning snacks." }) : "Noted, no peanuts."),
      ],
      { onExhausted: "repeat-last" },
    );
    const factory = () => ({ model, warnings: [], config: { name: "m1", supportsVision: false, contextWindow: null, thinkingEnabled: false, reasoningEffort: null } as never });
    const config = appConfigFromText(CONFIG).config;
    try {
      const runtime = await DeerFlowRuntime.open({ config, dataDir: path.join(dir, "data"), modelFactory: factory, log: () => undefined });
      const memory = runtime.extensions.memory!;
      expect(memory).toBeDefined();
      const client = new DeerFlowClient(runtime);
      expect(await client.chat("I'm allergic to peanuts, keep that in mind", { threadId: "t1" })).toBe("Noted, no peanuts.");
      // Debounce is 60 s: nothing has been extracted yet; close() must flush it.
      expect(model.requests.filter(isUpdater)).toHaveLength(0);
      expect(memory.updaterStatus.pending).toBe(1);
      await runtime.close();
      const file = path.join(dir, "data", "users", "default", "memory.json");
      expect(JSON.parse(readFileSync(file, "utf8")).facts.map((f: { content: string }) => f.content)).toEqual(["User is allergic to peanuts"]);
      const updaterPrompt = text(model.requests.find(isUpdater)!);
      expect(updaterPrompt).toContain("I'm allergic to peanuts, keep that in mind");

      const runtime2 = await DeerFlowRuntime.open({ config, dataDir: path.join(dir, "data"), modelFactory: factory, log: () => undefined });
      const client2 = new DeerFlowClient(runtime2);
      await client2.chat("Suggest a snack with peanuts or almonds for me", { threadId: "t2" });
      const chat = model.requests.filter((r) => !isUpdater(r)).at(-1)!;
      const memoryMsg = chat.messages.find((m) => contentText(m.content).startsWith("<memory>"))!;
      expect(memoryMsg.type).toBe("human");
      expect(contentText(memoryMsg.content)).toContain("- [context | 0.95] User is allergic to peanuts");
      expect(contentText(memoryMsg.content)).toContain("Related conversations:");
      const state = await runtime2.readState("t2");
      const hidden = state!.values.messages.find((m) => m.id?.endsWith("__memory"))!;
      expect((hidden.additional_kwargs.memory_recall as { facts: Array<{ content: string; relevant: boolean }> }).facts).toEqual([expect.objectContaining({ content: "User is allergic to peanuts", relevant: true })]);
      // DeerFlowClient's memory methods (DeerFlow's names and shapes).
      const doc = await client2.getMemory();
      expect(doc.facts.map((f) => f.content)).toEqual(["User is allergic to peanuts"]);
      const added = await client2.createMemoryFact("User prefers oat milk", "preference", 0.9);
      const oat = added.facts.find((f) => f.content === "User prefers oat milk")!;
      expect((await client2.updateMemoryFact(oat.id, { confidence: 0.8 })).facts.find((f) => f.id === oat.id)?.confidence).toBe(0.8);
      expect((await client2.deleteMemoryFact(oat.id)).facts).toHaveLength(1);
      const exported = await client2.exportMemory();
      expect((await client2.clearMemory()).facts).toEqual([]);
      expect((await client2.importMemory(exported)).facts).toHaveLength(1);
      expect((await client2.reloadMemory()).facts).toHaveLength(1);
      expect(await client2.getMemoryConfig()).toMatchObject({ enabled: true, mode: "middleware", backend_config: { debounce_seconds: 60 } });
      expect((await client2.getMemoryStatus()).data.facts).toHaveLength(1);
      await runtime2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
