import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { appConfigFromText, createAgent, createLoopDetectionMiddleware, DeerFlowRuntime, threadStateSchema } from "@deerflow-ts/harness";
import type { RunSettings } from "@deerflow-ts/harness";
import { ScriptedModel, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import { echoTool, humanInput, postJson } from "../helpers/test-gateway";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-settings-"));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function serve(runtime: DeerFlowRuntime): Promise<{ gateway: Gateway; url: string }> {
  const started = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
  cleanups.push(async () => {
    await started.gateway.close();
    await runtime.close();
  });
  return started;
}

async function newThread(url: string): Promise<string> {
  return ((await (await postJson(`${url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
}

describe("run settings reach the lead agent unchanged (real server, real lead agent, scripted provider)", () => {
  let llm: ScriptedLLMServer;
  afterEach(async () => llm?.close());

  it("context.reasoning_effort and configurable.reasoning_effort reach the provider request", async () => {
    llm = await startScriptedLLMServer({ script: ["one", "two"] });
    const { config } = appConfigFromText(
      [
        "models:",
        "  - name: effort",
        "    use: openai-compatible",
        "    model: scripted",
        `    base_url: ${llm.url}/v1`,
        "    api_key: k",
        "    supports_reasoning_effort: true",
        "sandbox:",
        "  use: local",
      ].join("\n"),
    );
    const runtime = await DeerFlowRuntime.open({ config, dataDir: tmp(), log: () => undefined });
    const { url } = await serve(runtime);
    const tid = await newThread(url);
    const r1 = await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("q1"), context: { reasoning_effort: "high" } });
    expect(r1.status).toBe(200);
    expect((llm.requests[0].body as Record<string, unknown>).reasoning_effort).toBe("high");
    const r2 = await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("q2"), config: { configurable: { reasoning_effort: "low" } } });
    expect(r2.status).toBe(200);
    expect((llm.requests[1].body as Record<string, unknown>).reasoning_effort).toBe("low");
  });

  it("every DeerFlow run key is parsed once into the settings the agent factory receives", async () => {
    const seen: RunSettings[] = [];
    const model = new ScriptedModel(["ok"], { onExhausted: "repeat-last" });
    const runtime = await DeerFlowRuntime.open({
      dataDir: tmp(),
      log: () => undefined,
      agentFactory: ({ settings, checkpointer }) => {
        seen.push(settings);
        return createAgent({ model, checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
      },
    });
    const { url } = await serve(runtime);
    const tid = await newThread(url);
    const res = await postJson(`${url}/api/threads/${tid}/runs/wait`, {
      input: humanInput("go"),
      context: { reasoning_effort: "medium", subagent_enabled: true, max_concurrent_subagents: 4, is_bootstrap: true, is_plan_mode: true, thinking_enabled: false },
      config: { configurable: { non_interactive: true } },
    });
    expect(res.status).toBe(200);
    expect(seen.at(-1)).toMatchObject({
      reasoningEffort: "medium",
      subagentEnabled: true,
      maxConcurrentSubagents: 4,
      isBootstrap: true,
      isPlanMode: true,
      thinkingEnabled: false,
      nonInteractive: true,
      threadId: tid,
      userId: "default",
    });
    const bad = await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("go"), context: { reasoning_effort: "maximum" } });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain("reasoning_effort");
  });
});

describe("run outcomes reach the run record (typed RunResult.outcome)", () => {
  it("a loop-detection hard stop is stored as stop_reason loop_capped and total_tokens adds up the model's usage", async () => {
    const call = { toolCalls: [{ name: "echo", args: { text: "again" } }], usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12 } };
    const model = new ScriptedModel([call, call, call, "never"]);
    const runtime = await DeerFlowRuntime.open({
      dataDir: tmp(),
      log: () => undefined,
      agentFactory: ({ checkpointer }) =>
        createAgent({
          model,
          tools: [echoTool],
          checkpointer,
          stateSchema: threadStateSchema,
          name: "lead_agent",
          middleware: [createLoopDetectionMiddleware({ warn_threshold: 2, hard_limit: 3 })],
        }),
    });
    const { url } = await serve(runtime);
    const tid = await newThread(url);
    const res = await postJson(`${url}/api/threads/${tid}/runs/wait`, { input: humanInput("loop") });
    expect(res.status).toBe(200);
    const sdk = new Client({ apiUrl: `${url}/api` });
    const [run] = await sdk.runs.list(tid);
    const record = await runtime.stores.runs.get(run.run_id);
    expect(record?.stopReason).toBe("loop_capped");
    expect(record?.usage).toMatchObject({ totalInputTokens: 30, totalOutputTokens: 6, totalTokens: 36, llmCallCount: 3, leadAgentTokens: 36 });
    expect(model.callCount).toBe(3);
  });
});
