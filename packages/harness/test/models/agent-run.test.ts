import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { humanMessage } from "../../src/messages";
import type { AIMessage, Message } from "../../src/messages";
import { createChatModel } from "../../src/models";
import { createAgent } from "../../src/runtime";
import { startScriptedLLMServer } from "../../src/testing/scripted-http";
import type { ScriptedLLMServer } from "../../src/testing/scripted-http";
import { tool } from "../../src/tools";
import { configWithModels } from "./helpers";

let server: ScriptedLLMServer;
beforeEach(async () => {
  server = await startScriptedLLMServer({ script: [] });
});
afterEach(async () => {
  await server.close();
});

const add = tool({
  name: "add",
  description: "Add two numbers",
  schema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});

describe.each(["openai-compatible", "anthropic"])("full agent run through %s over HTTP", (use) => {
  it("model → tool → model with the real provider stack", async () => {
    server.push({ toolCalls: [{ name: "add", args: { a: 2, b: 3 }, id: "call_add" }] }, "2 + 3 = 5");
    const base = use === "anthropic" ? server.url : `${server.url}/v1`;
    const cfg = configWithModels(`  - name: m\n    use: ${use}\n    model: scripted\n    api_key: k\n    base_url: ${base}\n    max_tokens: 500\n`);
    const { model } = createChatModel(cfg, "m");
    const agent = createAgent({ model, tools: [add], systemPrompt: "You add numbers." });
    const result = await agent.invoke({ messages: [humanMessage("What is 2+3?")] }, { threadId: "t1" });
    expect(result.status).toBe("success");
    const messages = result.state.messages as Message[];
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages[2]).toMatchObject({ type: "tool", tool_call_id: "call_add", content: "5" });
    expect((messages[3] as AIMessage).content).toBe("2 + 3 = 5");
    // The tool result went back to the server on the second call.
    expect(JSON.stringify(server.requests[1].body?.messages)).toContain("call_add");
    expect(server.requests).toHaveLength(2);
  });
});
