import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { humanMessage } from "../../src/messages";
import { collectModelStream, createChatModel } from "../../src/models";
import { startScriptedLLMServer } from "../../src/testing/scripted-http";
import type { ScriptedLLMServer } from "../../src/testing/scripted-http";
import { configWithModels } from "./helpers";

let server: ScriptedLLMServer;
beforeEach(async () => {
  server = await startScriptedLLMServer({ script: [] });
});
afterEach(async () => {
  await server.close();
});

async function once(yaml: string, opts: Parameters<typeof createChatModel>[2] = {}) {
  server.push("ok");
  const { model } = createChatModel(configWithModels(yaml), "m", { logger: { warn() {} }, ...opts });
  await collectModelStream(model.stream({ messages: [humanMessage("hi")], tools: [] }));
  return server.requests[server.requests.length - 1].body!;
}

describe("config keys reach the wire", () => {
  it("extra_body, passthrough keys, max_tokens and temperature (deepseek, thinking on)", async () => {
    const body = await once(
      `  - name: m\n    use: deerflow.models.patched_deepseek:PatchedChatDeepSeek\n    model: doubao\n    api_base: ${server.url}/v1\n    api_key: k\n    timeout: 600\n    max_retries: 2\n    max_tokens: 321\n    temperature: 0.3\n    top_p: 0.9\n    supports_thinking: true\n    supports_reasoning_effort: true\n    when_thinking_enabled:\n      extra_body:\n        thinking:\n          type: enabled\n`,
      { thinkingEnabled: true, reasoningEffort: "high" },
    );
    expect(body).toMatchObject({ model: "doubao", max_tokens: 321, temperature: 0.3, top_p: 0.9, thinking: { type: "enabled" }, reasoning_effort: "high" });
    // the per-call fields travel to the fetch in a request header, which never reaches the provider
    expect(Object.keys(server.requests[server.requests.length - 1].headers).filter((h) => h.startsWith("x-deerflow"))).toEqual([]);
    expect(body).not.toHaveProperty("max_retries");
    expect(body).not.toHaveProperty("timeout");
    expect(body).not.toHaveProperty("extra_body");
  });

  it("thinking off sends extra_body.thinking disabled", async () => {
    const body = await once(
      `  - name: m\n    use: deepseek\n    model: d\n    base_url: ${server.url}/v1\n    api_key: k\n    supports_thinking: true\n    when_thinking_enabled:\n      extra_body:\n        thinking:\n          type: enabled\n`,
      { thinkingEnabled: false },
    );
    expect(body.thinking).toEqual({ type: "disabled" });
    expect(body).not.toHaveProperty("reasoning_effort");
  });

  it("vLLM chat_template_kwargs reach the body", async () => {
    const body = await once(
      `  - name: m\n    use: vllm\n    model: q\n    base_url: ${server.url}/v1\n    supports_thinking: true\n    when_thinking_enabled:\n      extra_body:\n        chat_template_kwargs:\n          enable_thinking: true\n`,
      { thinkingEnabled: true },
    );
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: true });
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it("ollama base_url without /v1 gets it appended", async () => {
    const body = await once(`  - name: m\n    use: langchain_ollama:ChatOllama\n    model: qwen3:32b\n    base_url: ${server.url}\n    num_predict: 99\n    reasoning: true\n`);
    expect(server.requests[0].path).toBe("/v1/chat/completions");
    expect(body.max_tokens).toBe(99);
    expect(body).not.toHaveProperty("reasoning");
  });

  it("anthropic thinking disabled when off, and per-call settings override defaults", async () => {
    server.push("ok");
    const { model } = createChatModel(
      configWithModels(`  - name: m\n    use: anthropic\n    model: c\n    base_url: ${server.url}\n    api_key: k\n    max_tokens: 4000\n    supports_thinking: true\n    thinking: {type: enabled, budget_tokens: 1024}\n`),
      "m",
      { thinkingEnabled: false },
    );
    await collectModelStream(model.stream({ messages: [humanMessage("hi")], tools: [], settings: { maxTokens: 50, temperature: 0.1 } }));
    const body = server.requests[0].body!;
    expect(body.thinking).toEqual({ type: "disabled" });
    expect(body.max_tokens).toBe(50);
    expect(body.temperature).toBe(0.1);
  });
});
