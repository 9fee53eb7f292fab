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

describe("reasoning effort is one typed setting, mapped per provider", () => {
  const efforts = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
  const entries = {
    openai: (url: string) => `  - name: m\n    use: langchain_openai:ChatOpenAI\n    model: gpt-4o\n    api_key: k\n    base_url: ${url}/v1\n    supports_reasoning_effort: true\n`,
    deepseek: (url: string) => `  - name: m\n    use: deepseek\n    model: d\n    api_key: k\n    base_url: ${url}/v1\n    supports_reasoning_effort: true\n    extra_body: {top_k: 3}\n`,
    anthropic: (url: string) => `  - name: m\n    use: anthropic\n    model: claude-sonnet-4\n    api_key: k\n    base_url: ${url}\n    max_tokens: 1000\n    supports_reasoning_effort: true\n`,
  };

  /** The body a call sends without an effort, and with each effort value. */
  async function bodies(flavour: keyof typeof entries) {
    const yaml = entries[flavour](server.url);
    const plain = await once(yaml, { thinkingEnabled: false });
    const withEffort: Record<string, Record<string, unknown>> = {};
    for (const e of efforts) withEffort[e] = await once(yaml, { thinkingEnabled: false, reasoningEffort: e });
    return { plain, withEffort };
  }

  it.each(["openai", "deepseek"] as const)("%s: each effort is the body's reasoning_effort and nothing else changes", async (flavour) => {
    const { plain, withEffort } = await bodies(flavour);
    expect(plain).not.toHaveProperty("reasoning_effort");
    for (const e of efforts) {
      const { reasoning_effort, ...rest } = withEffort[e];
      expect(reasoning_effort).toBe(e);
      expect(rest).toEqual(plain);
    }
    if (flavour === "deepseek") expect(plain.top_k).toBe(3);
    for (const r of server.requests) expect(Object.keys(r.headers).filter((h) => h.startsWith("x-deerflow"))).toEqual([]);
  });

  it("anthropic: low…xhigh become output_config.effort; none and minimal send nothing; nothing else changes", async () => {
    const { plain, withEffort } = await bodies("anthropic");
    expect(plain).not.toHaveProperty("output_config");
    expect(plain).not.toHaveProperty("reasoning_effort");
    for (const e of efforts) {
      const { output_config, ...rest } = withEffort[e];
      expect(output_config).toEqual(e === "none" || e === "minimal" ? undefined : { effort: e });
      expect(rest).toEqual(plain);
    }
  });

  it("a model without supports_reasoning_effort sends no effort, whatever was asked", async () => {
    const body = await once(entries.openai(server.url).replace("    supports_reasoning_effort: true\n", ""), { reasoningEffort: "high" });
    expect(body).not.toHaveProperty("reasoning_effort");
  });

  it("anthropic native thinking reaches the wire as thinking with budget_tokens", async () => {
    const body = await once(entries.anthropic(server.url) + "    supports_thinking: true\n    thinking: {type: enabled, budget_tokens: 512}\n", { thinkingEnabled: true });
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 512 });
  });

  it("per-call providerOptions reach only their own call's body", async () => {
    server.push("a", "b");
    const { model } = createChatModel(configWithModels(entries.openai(server.url)), "m", { logger: { warn() {} } });
    await Promise.all([
      collectModelStream(model.stream({ messages: [humanMessage("1")], tools: [], settings: { providerOptions: { extra_body: { tag: "one" } } } })),
      collectModelStream(model.stream({ messages: [humanMessage("2")], tools: [] })),
    ]);
    const tagged = server.requests.map((r) => [JSON.stringify(r.body!.messages).includes('"1"') ? "1" : "2", r.body!.tag]);
    expect(tagged.sort()).toEqual([["1", "one"], ["2", undefined]]);
  });
});
