import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DeerFlowClient } from "../../src/client";
import { appConfigFromText } from "../../src/config";
import { createAgent } from "../../src/runtime";
import type { RunConfig } from "../../src/runtime";
import { ScriptedModel, startScriptedLLMServer } from "../../src/testing";
import { tool } from "../../src/tools";
import type { RunContext } from "../../src/tools";
import type { ScriptedLLMServer } from "../../src/testing";

// The run setting travels typed from the client option to the provider mapping; a setting dropped on the way
// (client → run settings → agent → model factory → provider request) shows here as a missing wire field.
let server: ScriptedLLMServer;
let dir: string;
beforeAll(async () => {
  server = await startScriptedLLMServer({ script: [] });
  dir = mkdtempSync(path.join(tmpdir(), "df-effort-"));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function client(reasoningEffort?: "low") {
  const { config } = appConfigFromText(`
models:
  - name: gpt
    use: langchain_openai:ChatOpenAI
    model: gpt-4o
    base_url: ${server.url}/v1
    api_key: sk-test-1234567890
    supports_reasoning_effort: true
  - name: claude
    use: anthropic
    model: claude-sonnet-4
    base_url: ${server.url}
    api_key: sk-ant-test-1234567890
    max_tokens: 1000
    supports_reasoning_effort: true
  - name: plain
    use: langchain_openai:ChatOpenAI
    model: gpt-4o
    base_url: ${server.url}/v1
    api_key: sk-test-1234567890
sandbox:
  use: local
title:
  enabled: false
`);
  return new DeerFlowClient({ appConfig: config, dataDir: path.join(dir, `data-${Math.random().toString(36).slice(2, 8)}`), reasoningEffort });
}

/** Stream one turn and return the body of the model request it made. */
async function turn(c: DeerFlowClient, options: Parameters<DeerFlowClient["stream"]>[1] = {}): Promise<Record<string, unknown>> {
  server.push("ok");
  const before = server.requests.length;
  for await (const _ of c.stream("hello", options)) void _;
  const made = server.requests.slice(before);
  expect(made).toHaveLength(1);
  return made[0].body!;
}

describe("reasoning effort from the embedded client to the wire", () => {
  it("client.stream(..., {reasoningEffort}) reaches OpenAI's reasoning_effort; the client default applies; per call wins", async () => {
    const c = client("low");
    try {
      expect((await turn(c)).reasoning_effort).toBe("low");
      expect((await turn(c, { reasoningEffort: "high" })).reasoning_effort).toBe("high");
      expect((await turn(c, { reasoningEffort: "minimal" })).reasoning_effort).toBe("minimal");
    } finally {
      await c.close();
    }
  });

  it("reaches Anthropic as output_config.effort; a model without supports_reasoning_effort sends none", async () => {
    const c = client();
    try {
      const anthropic = await turn(c, { modelName: "claude", reasoningEffort: "medium" });
      expect(anthropic.output_config).toEqual({ effort: "medium" });
      expect(anthropic).not.toHaveProperty("reasoning_effort");
      const plain = await turn(c, { modelName: "plain", reasoningEffort: "high" });
      expect(plain).not.toHaveProperty("reasoning_effort");
      const none = await turn(c, { modelName: "gpt" });
      expect(none).not.toHaveProperty("reasoning_effort");
    } finally {
      await c.close();
    }
  });
});

describe("the embedded client's run context", () => {
  it("context.secrets reaches tools as typed secrets only: not configurable, the run record or the thread's checkpoints", async () => {
    const SECRET = "tok-client-1a2b3c4d5e";
    const seen: { context?: RunContext; config?: RunConfig } = {};
    const probe = tool({
      name: "probe",
      description: "reads the run context",
      schema: z.object({}),
      execute: (_a, rt) => {
        seen.context = rt.context;
        return rt.context.secrets.get("API_TOKEN") === SECRET ? "bound" : "missing";
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ name: "probe", args: {} }] }, "done"]);
    const c = new DeerFlowClient({
      dataDir: path.join(dir, "secrets"),
      agentName: "writer",
      agentFactory: ({ checkpointer }) =>
        createAgent({ model, tools: [probe], checkpointer, name: "lead_agent", middleware: [{ name: "Spy", beforeAgent: (_s, rt) => void (seen.config = rt.config) }] }),
    });
    try {
      for await (const _ of c.stream("go", { threadId: "sec-t1", reasoningEffort: "high", context: { secrets: { API_TOKEN: SECRET } } })) void _;
      expect(seen.context?.secrets.get("API_TOKEN")).toBe(SECRET);
      expect(seen.context?.identity).toMatchObject({ threadId: "sec-t1", agentName: "writer" });
      expect(seen.context?.settings.reasoningEffort).toBe("high");
      expect(JSON.stringify(seen.config)).not.toContain(SECRET);
      const stores = await c.persistence();
      expect(JSON.stringify(await stores.runs.listByThread("sec-t1"))).not.toContain(SECRET);
      const runtime = await (c as unknown as { runtime(): Promise<{ checkpointer: { list(t: string): Promise<unknown[]> } }> }).runtime();
      const checkpoints = await runtime.checkpointer.list("sec-t1");
      expect(checkpoints.length).toBeGreaterThan(0);
      expect(JSON.stringify(checkpoints)).not.toContain(SECRET);
    } finally {
      await c.close();
    }
  });
});
