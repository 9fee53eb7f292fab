import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelCallError } from "../../src/errors";
import { aiMessage, humanMessage, systemMessage, toolMessage } from "../../src/messages";
import { collectModelStream, createChatModel } from "../../src/models";
import type { ChatModel, ModelStreamPart, ToolSpec } from "../../src/models";
import { startScriptedLLMServer } from "../../src/testing/scripted-http";
import type { ScriptedLLMServer } from "../../src/testing/scripted-http";
import { configWithModels } from "./helpers";

const weatherTool: ToolSpec = {
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

let server: ScriptedLLMServer;
beforeEach(async () => {
  server = await startScriptedLLMServer({ script: [] });
});
afterEach(async () => {
  await server.close();
});

type Flavour = "openai" | "deepseek" | "anthropic";

function modelFor(flavour: Flavour, extra = ""): ChatModel {
  const entries: Record<Flavour, string> = {
    openai: `  - name: m\n    use: langchain_openai:ChatOpenAI\n    model: gpt-4o\n    api_key: sk-test-openai\n    base_url: ${server.url}/v1\n`,
    deepseek: `  - name: m\n    use: langchain_deepseek:ChatDeepSeek\n    model: deepseek-reasoner\n    api_key: sk-test-deepseek\n    api_base: ${server.url}/v1\n`,
    anthropic: `  - name: m\n    use: langchain_anthropic:ChatAnthropic\n    model: claude-sonnet-4\n    api_key: sk-ant-test\n    base_url: ${server.url}\n    max_tokens: 1000\n`,
  };
  return createChatModel(configWithModels(entries[flavour] + extra), "m", { thinkingEnabled: false }).model;
}

async function parts(model: ChatModel, req: Parameters<ChatModel["stream"]>[0]): Promise<ModelStreamPart[]> {
  const out: ModelStreamPart[] = [];
  for await (const p of model.stream(req)) out.push(p);
  return out;
}

async function failure(model: ChatModel, signal?: AbortSignal): Promise<ModelCallError> {
  try {
    await collectModelStream(model.stream({ messages: [humanMessage("hi")], tools: [], signal }));
  } catch (err) {
    expect(err).toBeInstanceOf(ModelCallError);
    return err as ModelCallError;
  }
  throw new Error("expected the call to fail");
}

describe.each<Flavour>(["openai", "deepseek", "anthropic"])("%s provider over the wire", (flavour) => {
  it("streams text deltas, usage and a stop finish", async () => {
    server.push({ text: "Hello there, traveller", usage: { input_tokens: 11, output_tokens: 7 } });
    const model = modelFor(flavour);
    const ps = await parts(model, { messages: [systemMessage("Be brief."), humanMessage("hi")], tools: [] });
    const textDeltas = ps.filter((p) => p.type === "text-delta");
    expect(textDeltas.length).toBeGreaterThan(1);
    const msg = await collectModelStream((async function* () { yield* ps; })());
    expect(msg.content).toBe("Hello there, traveller");
    expect(msg.response_metadata.finish_reason).toBe("stop");
    expect(msg.usage_metadata).toMatchObject({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
    const req = server.requests[0];
    expect(req.api).toBe(flavour === "anthropic" ? "anthropic" : "openai");
    expect(req.body?.stream).toBe(true);
    if (flavour === "anthropic") {
      expect(JSON.stringify(req.body?.system)).toContain("Be brief.");
      expect(req.credentials?.apiKey).toBe("sk-ant-test");
      expect(req.headers["x-api-key"]).not.toContain("sk-ant-test");
    } else {
      expect((req.body?.messages as Array<{ role: string }>)[0].role).toBe("system");
      expect(req.credentials?.authorization).toBe(`Bearer sk-test-${flavour}`);
      expect(req.headers.authorization).toContain("[REDACTED]");
      expect(req.body?.stream_options).toMatchObject({ include_usage: true });
    }
  });

  it("round-trips a tool call: streamed args, then assistant tool_calls + tool result sent back", async () => {
    server.push({ text: "Let me check.", toolCalls: [{ name: "get_weather", args: { city: "Paris" }, id: "call_w1" }] }, "It is sunny in Paris.");
    const model = modelFor(flavour);
    const first = await collectModelStream(model.stream({ messages: [humanMessage("Weather in Paris?")], tools: [weatherTool] }));
    expect(first.tool_calls).toEqual([{ id: "call_w1", name: "get_weather", args: { city: "Paris" }, type: "tool_call" }]);
    expect(first.response_metadata.finish_reason).toBe("tool_calls");
    expect(first.content).toBe("Let me check.");

    const second = await collectModelStream(
      model.stream({
        messages: [humanMessage("Weather in Paris?"), first, toolMessage("sunny, 24C", { tool_call_id: "call_w1", name: "get_weather" })],
        tools: [weatherTool],
      }),
    );
    expect(second.content).toBe("It is sunny in Paris.");
    const body = server.requests[1].body!;
    const wireMessages = body.messages as Array<Record<string, unknown>>;
    if (flavour === "anthropic") {
      const tools = body.tools as Array<{ name: string; input_schema: unknown }>;
      expect(tools[0].name).toBe("get_weather");
      const assistant = wireMessages[1] as { role: string; content: Array<Record<string, unknown>> };
      expect(assistant.role).toBe("assistant");
      expect(assistant.content).toContainEqual(expect.objectContaining({ type: "tool_use", id: "call_w1", name: "get_weather", input: { city: "Paris" } }));
      const user = wireMessages[2] as { role: string; content: Array<Record<string, unknown>> };
      expect(user.role).toBe("user");
      expect(user.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "call_w1" });
      expect(JSON.stringify(user.content[0].content)).toContain("sunny, 24C");
    } else {
      const tools = body.tools as Array<{ type: string; function: { name: string; parameters: unknown } }>;
      expect(tools[0]).toMatchObject({ type: "function", function: { name: "get_weather" } });
      const assistant = wireMessages[1] as { role: string; tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> };
      expect(assistant.role).toBe("assistant");
      expect(assistant.tool_calls[0].id).toBe("call_w1");
      expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual({ city: "Paris" });
      expect(wireMessages[2]).toMatchObject({ role: "tool", tool_call_id: "call_w1", content: "sunny, 24C" });
    }
  });

  it("maps 429 with Retry-After to a rate_limit error with retryAfterMs", async () => {
    server.push({ fault: "rate_limit", retryAfter: 7 });
    const err = await failure(modelFor(flavour));
    expect(err.kind).toBe("rate_limit");
    expect(err.status).toBe(429);
    expect(err.retryAfterMs).toBe(7000);
    expect(err.providerCode).toBe(flavour === "anthropic" ? "rate_limit_error" : "rate_limit_exceeded");
    expect(server.requests).toHaveLength(1); // no retries inside the provider
  });

  it("maps 500, 401, quota and context-length errors", async () => {
    server.push({ fault: "server_error" }, { fault: "unauthorized" }, { fault: "insufficient_quota" }, { fault: "context_length" });
    const model = modelFor(flavour);
    const e1 = await failure(model);
    expect([e1.kind, e1.status]).toEqual(["server", 500]);
    const e2 = await failure(model);
    expect([e2.kind, e2.status]).toEqual(["auth", 401]);
    const e3 = await failure(model);
    expect(e3.kind).toBe("quota");
    expect(e3.providerCode).toBe(flavour === "anthropic" ? "billing_error" : "insufficient_quota");
    const e4 = await failure(model);
    expect(e4.kind).toBe("context_length");
    expect(server.requests).toHaveLength(4);
  });

  it("times out a hanging server with a timeout error", async () => {
    server.push({ fault: "hang" });
    const model = modelFor(flavour, "    timeout: 0.3\n");
    const started = Date.now();
    const err = await failure(model);
    expect(err.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("passes the caller's abort through untouched", async () => {
    server.push({ fault: "hang" });
    const controller = new AbortController();
    const reason = new Error("user cancelled");
    setTimeout(() => controller.abort(reason), 100);
    await expect(collectModelStream(modelFor(flavour).stream({ messages: [humanMessage("hi")], tools: [], signal: controller.signal }))).rejects.toBe(reason);
  });

  it("reports a stream cut mid-way as a connection error after the partial text", async () => {
    server.push({ fault: "cut_stream", partialText: "The answer is" });
    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const p of modelFor(flavour).stream({ messages: [humanMessage("hi")], tools: [] })) if (p.type === "text-delta") seen.push(p.text);
    } catch (err) {
      error = err;
    }
    expect(seen.join("")).toBe("The answer is");
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as ModelCallError).kind).toBe("connection");
  });

  it("reports a malformed chunk as a ModelCallError", async () => {
    server.push({ fault: "malformed_chunk" });
    const err = await failure(modelFor(flavour));
    expect(["server", "connection"]).toContain(err.kind);
  });

  it("maps finish reason length", async () => {
    server.push({ text: "cut", finishReason: "length" });
    const msg = await collectModelStream(modelFor(flavour).stream({ messages: [humanMessage("hi")], tools: [] }));
    expect(msg.response_metadata.finish_reason).toBe("length");
  });

  it("sends images to vision models", async () => {
    server.push("a red dot");
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    await collectModelStream(
      modelFor(flavour).stream({
        messages: [humanMessage([{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }])],
        tools: [],
      }),
    );
    const wire = JSON.stringify(server.requests[0].body?.messages);
    expect(wire).toContain(png);
    expect(wire).toContain(flavour === "anthropic" ? '"type":"image"' : '"type":"image_url"');
  });
});

describe("reasoning content", () => {
  it("deepseek streams reasoning_content and sends it back on assistant turns", async () => {
    server.push({ reasoning: "Think about Paris.", toolCalls: [{ name: "get_weather", args: { city: "Paris" }, id: "c1" }] }, "Sunny.");
    const model = modelFor("deepseek");
    const ps = await parts(model, { messages: [humanMessage("Weather?")], tools: [weatherTool] });
    expect(ps.filter((p) => p.type === "reasoning-delta").map((p) => (p as { text: string }).text).join("")).toBe("Think about Paris.");
    const first = await collectModelStream((async function* () { yield* ps; })());
    expect(first.additional_kwargs.reasoning_content).toBe("Think about Paris.");
    await collectModelStream(model.stream({ messages: [humanMessage("Weather?"), first, toolMessage("sunny", { tool_call_id: "c1" })], tools: [weatherTool] }));
    const assistant = (server.requests[1].body!.messages as Array<Record<string, unknown>>)[1];
    expect(assistant.reasoning_content).toBe("Think about Paris.");
  });

  it("anthropic streams thinking and replays it with its signature", async () => {
    server.push({ reasoning: "Consider the tool.", toolCalls: [{ name: "get_weather", args: { city: "Oslo" }, id: "t1" }] }, "Cold.");
    const entry = `  - name: m\n    use: anthropic\n    model: claude-sonnet-4\n    api_key: k\n    base_url: ${server.url}\n    max_tokens: 8000\n    supports_thinking: true\n    when_thinking_enabled:\n      thinking:\n        type: enabled\n        budget_tokens: 2048\n`;
    const { model } = createChatModel(configWithModels(entry), "m", { thinkingEnabled: true });
    const first = await collectModelStream(model.stream({ messages: [humanMessage("Weather in Oslo?")], tools: [weatherTool] }));
    expect(first.additional_kwargs.reasoning_content).toBe("Consider the tool.");
    expect(first.response_metadata.reasoning_signature).toBe("scripted-signature");
    expect(server.requests[0].body?.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    await collectModelStream(model.stream({ messages: [humanMessage("Weather in Oslo?"), first, toolMessage("-5C", { tool_call_id: "t1" })], tools: [weatherTool] }));
    const assistant = (server.requests[1].body!.messages as Array<{ content: Array<Record<string, unknown>> }>)[1];
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Consider the tool.", signature: "scripted-signature" });
  });

  it("openai tool-call round trip with several calls keeps their order", async () => {
    server.push({ toolCalls: [{ name: "get_weather", args: { city: "A" } }, { name: "get_weather", args: { city: "B" } }] });
    const msg = await collectModelStream(modelFor("openai").stream({ messages: [humanMessage("both")], tools: [weatherTool] }));
    expect(msg.tool_calls.map((c) => c.args.city)).toEqual(["A", "B"]);
  });

  it("sends ai messages without tool calls as plain assistant text", async () => {
    server.push("ok");
    await collectModelStream(modelFor("openai").stream({ messages: [humanMessage("a"), aiMessage("b"), humanMessage("c")], tools: [] }));
    expect(server.requests[0].body?.messages).toEqual([
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: "c" },
    ]);
  });
});
