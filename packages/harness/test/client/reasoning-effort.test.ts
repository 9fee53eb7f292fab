import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeerFlowClient } from "../../src/client";
import { appConfigFromText } from "../../src/config";
import { startScriptedLLMServer } from "../../src/testing";
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
