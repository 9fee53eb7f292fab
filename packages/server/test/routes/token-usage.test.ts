/**
 * `GET /api/threads/{id}/token-usage` in DeerFlow's ThreadTokenUsageResponse
 * shape: totals by caller and by configured model name, context_usage against
 * the model's context_window, cache-read tokens and the cost from pricing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { contextUsage } from "../../src/routes/token-usage";
import { startRuntimeGateway } from "../helpers/runtime-gateway";
import type { RuntimeGateway } from "../helpers/runtime-gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

let gw: RuntimeGateway | undefined;
let llm: ScriptedLLMServer | undefined;
afterEach(async () => {
  await gw?.close();
  await llm?.close();
  gw = llm = undefined;
});

describe("token-usage route", () => {
  it("answers DeerFlow's shape with context_usage, by_model keyed by the configured name, and the priced cost", async () => {
    llm = await startScriptedLLMServer({
      script: [
        { text: "first answer", usage: { input_tokens: 1000, output_tokens: 200 } },
        { text: "second answer", usage: { input_tokens: 3000, output_tokens: 500 } },
      ],
    });
    gw = await startRuntimeGateway([
      "models:",
      "  - name: priced-model",
      "    use: openai-compatible",
      "    model: scripted",
      `    base_url: ${llm.url}/v1`,
      "    api_key: k",
      "    context_window: 2000",
      "    pricing:",
      "      currency: USD",
      "      input_per_million: 2.0",
      "      output_per_million: 8.0",
      "title:",
      "  enabled: false",
      "memory:",
      "  enabled: false",
      "sandbox:",
      "  use: local",
    ]);
    await postJson(`${gw.api}/threads`, { thread_id: "tu-1" });
    for (const text of ["hello there", "and again"]) {
      const res = await postJson(`${gw.api}/threads/tu-1/runs/wait`, { input: humanInput(text), context: { model_name: "priced-model" } });
      expect(res.status).toBe(200);
    }
    const res = await fetch(`${gw.api}/threads/tu-1/token-usage`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    expect(body).toMatchObject({
      thread_id: "tu-1",
      total_input_tokens: 4000,
      total_output_tokens: 700,
      total_tokens: 4700,
      total_runs: 2,
      by_model: { "priced-model": { tokens: 4700, runs: 2 } },
      by_caller: { lead_agent: 4700, subagent: 0, middleware: 0 },
      cache_read_tokens: 0,
      currency: "USD",
    });
    // 4000 input tokens at 2 per million, 700 output at 8 per million
    expect(body.cost).toBeCloseTo(0.0136, 10);
    const state = (await (await fetch(`${gw.api}/threads/tu-1/state`)).json()) as { values: { messages: unknown[] } };
    const expected = contextUsage(state.values.messages as never, 2000);
    expect(body.context_usage).toEqual(expected);
    expect(body.context_usage.max_context_tokens).toBe(2000);
    expect(body.context_usage.token_count).toBeGreaterThan(0);
    expect(body.context_usage.percentage).toBe(Math.round((expected.token_count / 2000) * 1000) / 10);
  });

  it("counts prompt-cache hits of the thread's replies and has no percentage without a context window", async () => {
    gw = await startRuntimeGateway(["models:", "  - name: m", "    use: openai-compatible", "    model: m", "    base_url: http://127.0.0.1:9/v1", "    api_key: k", "sandbox:", "  use: local"]);
    await postJson(`${gw.api}/threads`, { thread_id: "tu-2" });
    await gw.runtime.updateState("tu-2", {
      messages: [
        { type: "human", id: "h1", content: "question" },
        { type: "ai", id: "a1", content: "answer", tool_calls: [], usage_metadata: { input_tokens: 100, output_tokens: 10, total_tokens: 110, input_token_details: { cache_read: 64 } } },
      ],
    });
    const body = (await (await fetch(`${gw.api}/threads/tu-2/token-usage`)).json()) as Record<string, any>;
    expect(body.cache_read_tokens).toBe(64);
    expect(body.total_runs).toBe(0);
    expect(body.cost).toBeNull();
    expect(body.context_usage).toMatchObject({ max_context_tokens: null, percentage: null });
    expect(body.context_usage.token_count).toBeGreaterThan(0);
  });
});
