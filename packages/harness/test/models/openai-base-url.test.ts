import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import { collectModelStream, createChatModel } from "../../src/models";
import { startScriptedLLMServer } from "../../src/testing/scripted-http";
import type { ScriptedLLMServer } from "../../src/testing/scripted-http";
import { configWithModels } from "./helpers";

describe("OPENAI_BASE_URL (the OpenAI SDK's variable) is the openai provider's default base URL", () => {
  let server: ScriptedLLMServer;
  beforeAll(async () => {
    server = await startScriptedLLMServer({ script: [] });
  });
  afterAll(async () => server.close());

  const entry = (extra = "") => configWithModels(`  - name: m\n    use: openai\n    model: gpt-4o\n    api_key: sk-test\n${extra}`);

  it("an entry without base_url goes to $OPENAI_BASE_URL", async () => {
    server.push("from the env url");
    const before = server.requests.length;
    const { model } = createChatModel(entry(), "m", { thinkingEnabled: false, env: { OPENAI_BASE_URL: `${server.url}/v1` } });
    const msg = await collectModelStream(model.stream({ messages: [humanMessage("hi")], tools: [] }));
    expect(msg.content).toBe("from the env url");
    expect(server.requests.length).toBe(before + 1);
  });

  it("the entry's own base_url still wins over it", async () => {
    server.push("from the entry");
    const { model } = createChatModel(entry(`    base_url: ${server.url}/v1\n`), "m", { thinkingEnabled: false, env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } });
    const msg = await collectModelStream(model.stream({ messages: [humanMessage("hi")], tools: [] }));
    expect(msg.content).toBe("from the entry");
  });
});
