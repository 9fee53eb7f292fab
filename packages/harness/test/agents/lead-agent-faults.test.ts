import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createLeadAgentFactory } from "../../src/agents";
import { appConfigFromText } from "../../src/config";
import { humanMessage, messageText } from "../../src/messages";
import type { AIMessage } from "../../src/messages";
import { startScriptedLLMServer } from "../../src/testing";
import type { HttpScriptStep, ScriptedLLMServer } from "../../src/testing";
import type { StreamEvent } from "../../src/runtime";

const home = mkdtempSync(join(tmpdir(), "df-faults-"));
let server: ScriptedLLMServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function runWith(script: HttpScriptStep[], extra = "") {
  server = await startScriptedLLMServer({ script });
  const { config } = appConfigFromText(`
models:
  - name: scripted
    use: langchain_openai:ChatOpenAI
    model: scripted
    base_url: ${server.url}/v1
    api_key: sk-test-1234567890
    request_timeout: 1
sandbox:
  use: local
llm_call:
  retry_base_delay_ms: 20
  retry_cap_delay_ms: 40
  burst_retry_base_delay_ms: 20
${extra}`);
  const factory = createLeadAgentFactory({ config, baseDir: home, warn: () => {} });
  const agent = await factory.makeLeadAgent({});
  const events: StreamEvent[] = [];
  const stream = agent.stream({ messages: [humanMessage("hello")] }, { threadId: `f${Math.random().toString(36).slice(2, 10)}`, streamMode: ["custom", "values"] });
  for await (const e of stream) events.push(e);
  return { result: await stream.result, events, server };
}

describe("lead agent against a faulty provider (scripted HTTP server)", () => {
  it("429 with Retry-After: waits the advertised time, emits llm_retry, then succeeds", async () => {
    const t0 = Date.now();
    const { result, events, server: s } = await runWith([{ fault: "rate_limit", retryAfter: 1 }, "Recovered answer"]);
    expect(result.status).toBe("success");
    expect(messageText(result.state.messages.at(-1)!)).toBe("Recovered answer");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    const retry = events.find((e) => e.mode === "custom" && (e.data as { type: string }).type === "llm_retry");
    expect(retry?.data).toMatchObject({ type: "llm_retry", attempt: 1, wait_ms: 1000 });
    expect(s.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(2);
    // The key went on the wire but is never recorded in clear text.
    expect(JSON.stringify(s.requests)).not.toContain("sk-test-1234567890");
  });

  it("a burst of 500s is retried and then succeeds", async () => {
    const { result } = await runWith([{ fault: "server_error" }, { fault: "server_error" }, "Fine now"]);
    expect(result.status).toBe("success");
    expect(messageText(result.state.messages.at(-1)!)).toBe("Fine now");
  });

  it("500s beyond the retry budget end with the fallback message (run status error), never an exception", async () => {
    const { result } = await runWith([{ fault: "server_error" }, { fault: "server_error" }, { fault: "server_error" }, { fault: "server_error" }]);
    expect(result.status).toBe("error");
    const last = result.state.messages.at(-1) as AIMessage;
    expect(last.type).toBe("ai");
    expect(last.additional_kwargs.deerflow_error_fallback).toBe(true);
    expect(messageText(last).length).toBeGreaterThan(0);
  });

  it("a hanging provider times out and ends with the fallback message", async () => {
    const { result } = await runWith([{ fault: "hang" }, { fault: "hang" }, { fault: "hang" }], "");
    expect(result.status).toBe("error");
    expect((result.state.messages.at(-1) as AIMessage).additional_kwargs.deerflow_error_fallback).toBe(true);
  }, 20_000);

  it("quota errors are not retried", async () => {
    const { result, server: s } = await runWith([{ fault: "insufficient_quota" }, "never"]);
    expect(result.status).toBe("error");
    expect(s.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(1);
    expect((result.state.messages.at(-1) as AIMessage).additional_kwargs.error_reason).toBe("quota");
  });
});
