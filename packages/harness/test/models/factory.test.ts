import { describe, expect, it } from "vitest";
import { ModelConfigError } from "../../src/errors";
import { createChatModel, resolveModelSettings, resolveModelEntry, resolveProvider } from "../../src/models";
import { configWithModels } from "./helpers";

const twoModels = configWithModels(
  `  - name: first\n    use: openai\n    model: gpt-4o\n    api_key: k\n  - name: second\n    use: langchain_anthropic:ChatAnthropic\n    model: claude\n    api_key: k\n    supports_vision: true\n    context_window: 200000\n`,
);

describe("resolveProvider", () => {
  it.each([
    ["openai", "openai", "openai"],
    ["langchain_openai:ChatOpenAI", "openai", "openai"],
    ["anthropic", "anthropic", "anthropic"],
    ["langchain_anthropic:ChatAnthropic", "anthropic", "anthropic"],
    ["deepseek", "deepseek", "openai-compatible"],
    ["langchain_deepseek:ChatDeepSeek", "deepseek", "openai-compatible"],
    ["deerflow.models.patched_deepseek:PatchedChatDeepSeek", "deepseek", "openai-compatible"],
    ["deerflow.models.patched_openai:PatchedChatOpenAI", "openai-compatible", "openai-compatible"],
    ["deerflow.models.vllm_provider:VllmChatModel", "vllm", "openai-compatible"],
    ["langchain_ollama:ChatOllama", "ollama", "openai-compatible"],
    ["openrouter", "openrouter", "openai-compatible"],
    ["langchain_google_genai:ChatGoogleGenerativeAI", "google", "openai-compatible"],
  ])("%s → %s (%s)", (use, id, family) => {
    const spec = resolveProvider(use);
    expect(spec.id).toBe(id);
    expect(spec.family).toBe(family);
  });

  it("rejects an unknown use with the supported list", () => {
    try {
      resolveProvider("my_pkg:MyChat", "x");
      throw new Error("no error");
    } catch (err) {
      expect(err).toBeInstanceOf(ModelConfigError);
      expect((err as Error).message).toContain('Unknown model provider "my_pkg:MyChat" (model "x")');
      expect((err as Error).message).toContain("langchain_openai:ChatOpenAI");
      expect((err as Error).message).toContain("openai-compatible");
    }
  });
});

describe("model resolution chain", () => {
  it("uses the requested name, then the agent model, then models[0]", () => {
    expect(resolveModelEntry(twoModels, "second").entry.name).toBe("second");
    expect(resolveModelEntry(twoModels, null, "second").entry.name).toBe("second");
    expect(resolveModelEntry(twoModels).entry.name).toBe("first");
  });

  it("falls back to models[0] with a warning for an unknown name", () => {
    const warnings: string[] = [];
    const created = createChatModel(twoModels, "nope", { logger: { warn: (m) => warnings.push(m) } });
    expect(created.config.name).toBe("first");
    expect(warnings[0]).toContain('Model "nope" is not configured; falling back to the default model "first"');
  });

  it("errors when no models are configured", () => {
    expect(() => createChatModel(configWithModels(""), "x")).toThrow(/No chat models are configured/);
  });

  it("returns the resolved config the lead agent needs", () => {
    const { config, model } = createChatModel(twoModels, "second", { logger: { warn() {} } });
    expect(config).toMatchObject({ name: "second", provider: "anthropic", model: "claude", supportsVision: true, contextWindow: 200000, thinkingEnabled: false });
    expect(model.provider).toBe("anthropic");
    expect(model.modelName).toBe("claude");
  });

  it("downgrades requested thinking with a warning when the model lacks supports_thinking", () => {
    const warnings: string[] = [];
    const { config } = createChatModel(twoModels, "first", { thinkingEnabled: true, logger: { warn: (m) => warnings.push(m) } });
    expect(config.thinkingEnabled).toBe(false);
    expect(warnings.join()).toContain("does not set supports_thinking");
  });

  it("requires an API key for hosted providers, naming the env var", () => {
    const cfg = configWithModels(`  - name: a\n    use: openai\n    model: gpt-4o\n`);
    expect(() => createChatModel(cfg, "a", { env: {} })).toThrow(/has no API key.*OPENAI_API_KEY/s);
    expect(createChatModel(cfg, "a", { env: { OPENAI_API_KEY: "x" }, logger: { warn() {} } }).model.provider).toBe("openai");
  });

  it("needs a base_url for generic openai-compatible models", () => {
    const cfg = configWithModels(`  - name: a\n    use: openai-compatible\n    model: m\n`);
    expect(() => createChatModel(cfg, "a")).toThrow(/needs a base_url/);
  });
});

describe("thinking rules (resolveModelSettings)", () => {
  const model = (yaml: string) => configWithModels(yaml).models[0];
  const buildModelKwargs = (m: Parameters<typeof resolveModelSettings>[0], o: Parameters<typeof resolveModelSettings>[1]) => resolveModelSettings(m, o).kwargs;

  it("passes extra keys through and drops meta keys", () => {
    const m = model(`  - name: a\n    use: openai\n    model: x\n    top_p: 0.5\n    supports_vision: true\n    context_window: 10\n    display_name: A\n`);
    const kw = buildModelKwargs(m, { thinkingEnabled: false });
    expect(kw).toMatchObject({ model: "x", top_p: 0.5 });
    expect(kw).not.toHaveProperty("supports_vision");
    expect(kw).not.toHaveProperty("context_window");
    expect(kw).not.toHaveProperty("display_name");
  });

  it("merges when_thinking_enabled when thinking is on", () => {
    const m = model(`  - name: a\n    use: deepseek\n    model: x\n    supports_thinking: true\n    when_thinking_enabled:\n      extra_body:\n        thinking:\n          type: enabled\n`);
    expect(buildModelKwargs(m, { thinkingEnabled: true }).extra_body).toEqual({ thinking: { type: "enabled" } });
  });

  it("refuses thinking settings on a model without supports_thinking", () => {
    const m = model(`  - name: a\n    use: deepseek\n    model: x\n    when_thinking_enabled:\n      extra_body: {thinking: {type: enabled}}\n`);
    expect(() => buildModelKwargs(m, { thinkingEnabled: true })).toThrow(ModelConfigError);
  });

  it("thinking off: explicit when_thinking_disabled wins", () => {
    const m = model(`  - name: a\n    use: deepseek\n    model: x\n    supports_thinking: true\n    when_thinking_enabled: {extra_body: {thinking: {type: enabled}}}\n    when_thinking_disabled: {extra_body: {thinking: {type: off}}}\n`);
    expect(buildModelKwargs(m, { thinkingEnabled: false }).extra_body).toEqual({ thinking: { type: "off" } });
  });

  it("thinking off: extra_body.thinking → disabled + reasoning_effort minimal (kept only with supports_reasoning_effort)", () => {
    const base = `  - name: a\n    use: deepseek\n    model: x\n    supports_thinking: true\n    when_thinking_enabled: {extra_body: {thinking: {type: enabled}}}\n`;
    const r = resolveModelSettings(model(base + "    supports_reasoning_effort: true\n"), { thinkingEnabled: false });
    expect(r.kwargs.extra_body).toEqual({ thinking: { type: "disabled" } });
    // the effort is a typed value, never a raw kwarg
    expect(r.reasoningEffort).toBe("minimal");
    expect(r.kwargs).not.toHaveProperty("reasoning_effort");
    expect(resolveModelSettings(model(base), { thinkingEnabled: false }).reasoningEffort).toBeNull();
    // the request's effort wins over the rule's
    expect(resolveModelSettings(model(base + "    supports_reasoning_effort: true\n"), { thinkingEnabled: false, reasoningEffort: "high" }).reasoningEffort).toBe("high");
  });

  it("thinking off: vLLM chat_template_kwargs flags are set false", () => {
    const m = model(`  - name: a\n    use: vllm\n    model: x\n    supports_thinking: true\n    when_thinking_enabled: {extra_body: {chat_template_kwargs: {enable_thinking: true}}}\n`);
    expect(buildModelKwargs(m, { thinkingEnabled: false }).extra_body).toEqual({ chat_template_kwargs: { enable_thinking: false } });
  });

  it("thinking off: native Anthropic thinking → disabled; `thinking:` shortcut merges when on", () => {
    const m = model(`  - name: a\n    use: anthropic\n    model: x\n    supports_thinking: true\n    thinking: {type: enabled, budget_tokens: 2048}\n`);
    expect(buildModelKwargs(m, { thinkingEnabled: false }).thinking).toEqual({ type: "disabled" });
    expect(buildModelKwargs(m, { thinkingEnabled: true }).thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  it("drops reasoning_effort unless supports_reasoning_effort; overrides apply, nulls ignored", () => {
    const m = model(`  - name: a\n    use: openai\n    model: x\n    temperature: 0.2\n    reasoning_effort: high\n`);
    const r = resolveModelSettings(m, { thinkingEnabled: false, reasoningEffort: "low", overrides: { temperature: 0.9, max_tokens: null } });
    expect(r.kwargs).not.toHaveProperty("reasoning_effort");
    expect(r.reasoningEffort).toBeNull();
    expect(r.kwargs.temperature).toBe(0.9);
    expect(r.kwargs).not.toHaveProperty("max_tokens");
    const m2 = model(`  - name: a\n    use: openai\n    model: x\n    supports_reasoning_effort: true\n`);
    expect(resolveModelSettings(m2, { thinkingEnabled: false, reasoningEffort: "low" }).reasoningEffort).toBe("low");
    // the entry's own reasoning_effort key is the model's default effort
    const m3 = model(`  - name: a\n    use: openai\n    model: x\n    supports_reasoning_effort: true\n    reasoning_effort: medium\n`);
    expect(resolveModelSettings(m3, { thinkingEnabled: false })).toMatchObject({ reasoningEffort: "medium", kwargs: { model: "x" } });
    expect(resolveModelSettings(m3, { thinkingEnabled: false, reasoningEffort: "high" }).reasoningEffort).toBe("high");
    const bad = model(`  - name: a\n    use: openai\n    model: x\n    supports_reasoning_effort: true\n    reasoning_effort: extreme\n`);
    expect(() => resolveModelSettings(bad, { thinkingEnabled: false })).toThrow(/reasoning_effort must be one of/);
  });
});
