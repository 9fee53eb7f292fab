import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { runScriptedLLMServerCli, startScriptedLLMServer } from "../../../src/testing/scripted-http";
import type { ScriptedLLMServer } from "../../../src/testing/scripted-http";

const open: ScriptedLLMServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
async function start(opts: Parameters<typeof startScriptedLLMServer>[0]) {
  const s = await startScriptedLLMServer(opts);
  open.push(s);
  return s;
}
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe("scripted OpenAI-compatible server", () => {
  it("listens on 127.0.0.1 and lists models", async () => {
    const s = await start({ script: [], models: ["a", "b"] });
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${s.url}/v1/models`);
    expect((await res.json()).data.map((m: { id: string }) => m.id)).toEqual(["a", "b"]);
  });

  it("answers non-streaming with tool_calls and usage", async () => {
    const s = await start({ script: [{ text: "hi", reasoning: "r", toolCalls: [{ name: "f", args: { x: 1 }, id: "c1" }], usage: { input_tokens: 3, output_tokens: 4 } }] });
    const res = await post(`${s.url}/v1/chat/completions`, { model: "m", messages: [{ role: "user", content: "x" }] });
    const body = await res.json();
    expect(body.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      message: { role: "assistant", content: "hi", reasoning_content: "r", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"x":1}' } }] },
    });
    expect(body.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it("streams SSE chunks with a usage chunk only when asked, then [DONE]", async () => {
    const s = await start({ script: ["one two", "three"] });
    const withUsage = await (await post(`${s.url}/v1/chat/completions`, { model: "m", stream: true, stream_options: { include_usage: true }, messages: [] })).text();
    const lines = withUsage.split("\n\n").filter(Boolean).map((l) => l.replace(/^data: /, ""));
    expect(lines[lines.length - 1]).toBe("[DONE]");
    const chunks = lines.slice(0, -1).map((l) => JSON.parse(l));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("one two");
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe("stop");
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
    const noUsage = await (await post(`${s.url}/v1/chat/completions`, { model: "m", stream: true, messages: [] })).text();
    expect(noUsage).not.toContain('"usage"');
  });

  it("injects 429 with Retry-After and a quota body", async () => {
    const s = await start({ script: [{ fault: "rate_limit", retryAfter: 2 }, { fault: "insufficient_quota" }] });
    const r1 = await post(`${s.url}/v1/chat/completions`, { messages: [] });
    expect(r1.status).toBe(429);
    expect(r1.headers.get("retry-after")).toBe("2");
    const r2 = await post(`${s.url}/v1/chat/completions`, { messages: [] });
    expect((await r2.json()).error.code).toBe("insufficient_quota");
  });

  it("reports an exhausted script as HTTP 500 naming the cause", async () => {
    const s = await start({ script: ["only"] });
    await post(`${s.url}/v1/chat/completions`, { messages: [] });
    const r = await post(`${s.url}/v1/chat/completions`, { messages: [] });
    expect(r.status).toBe(500);
    expect((await r.json()).error.message).toContain("script exhausted after 1 step");
  });

  it("records requests with credentials redacted in anything printed", async () => {
    const s = await start({ script: ["ok"] });
    await post(`${s.url}/v1/chat/completions`, { model: "m", messages: [] }, { authorization: "Bearer sk-supersecret-123" });
    const rec = s.requests[0];
    expect(rec.body).toEqual({ model: "m", messages: [] });
    expect(rec.credentials?.authorization).toBe("Bearer sk-supersecret-123");
    expect(JSON.stringify(rec)).not.toContain("supersecret");
    expect(inspect(rec, { depth: 5 })).not.toContain("supersecret");
    expect(rec.headers.authorization).toBe("Bearer sk-…[REDACTED]");
  });
});

describe("scripted Anthropic server", () => {
  it("streams message_start … message_stop with text, thinking and tool_use blocks", async () => {
    const s = await start({ script: [{ reasoning: "hmm", text: "hi", toolCalls: [{ name: "f", args: { a: 1 } }] }] });
    const text = await (await post(`${s.url}/v1/messages`, { model: "c", stream: true, max_tokens: 10, messages: [] })).text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events[0]).toBe("message_start");
    expect(events[events.length - 1]).toBe("message_stop");
    expect(events).toContain("message_delta");
    expect(text).toContain('"thinking_delta"');
    expect(text).toContain('"text_delta"');
    expect(text).toContain('"input_json_delta"');
    expect(text).toContain('"stop_reason":"tool_use"');
  });

  it("answers non-streaming and returns Anthropic error bodies", async () => {
    const s = await start({ script: ["hello", { fault: "overloaded" }] });
    const ok = await (await post(`${s.url}/v1/messages`, { model: "c", messages: [] })).json();
    expect(ok).toMatchObject({ type: "message", content: [{ type: "text", text: "hello" }], stop_reason: "end_turn" });
    const r = await post(`${s.url}/v1/messages`, { model: "c", messages: [] });
    expect(r.status).toBe(529);
    expect((await r.json()).error.type).toBe("overloaded_error");
  });
});

describe("echo model and CLI", () => {
  it("echoes, calls a requested tool, and summarises tool results", async () => {
    const s = await start({});
    const tools = [{ type: "function", function: { name: "bash", parameters: { type: "object", properties: { command: { type: "string" }, description: { type: "string" } }, required: ["description", "command"] } } }];
    const r1 = await (await post(`${s.url}/v1/chat/completions`, { messages: [{ role: "user", content: "hello deer" }] })).json();
    expect(r1.choices[0].message.content).toBe("You said: hello deer");
    const r2 = await (await post(`${s.url}/v1/chat/completions`, { tools, messages: [{ role: "user", content: 'use the tool bash with {"command": "ls"}' }] })).json();
    const call = r2.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe("bash");
    expect(JSON.parse(call.function.arguments)).toMatchObject({ command: "ls", description: expect.any(String) });
    const r3 = await (await post(`${s.url}/v1/chat/completions`, { messages: [{ role: "tool", tool_call_id: "x", content: "file.txt" }] })).json();
    expect(r3.choices[0].message.content).toBe("The tool returned: file.txt");
  });

  it("runScriptedLLMServerCli starts on the given port with a script file and prints a config hint", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "df-cli-"));
    const file = path.join(dir, "script.json");
    writeFileSync(file, JSON.stringify(["scripted answer"]));
    const out: string[] = [];
    const s = await runScriptedLLMServerCli(["--port", "0", "--script", file, "--quiet"], (l) => out.push(l));
    expect(s).not.toBeNull();
    open.push(s!);
    expect(out.join("\n")).toContain(`base_url: ${s!.url}/v1`);
    const r = await (await post(`${s!.url}/v1/chat/completions`, { messages: [{ role: "user", content: "x" }] })).json();
    expect(r.choices[0].message.content).toBe("scripted answer");
    const r2 = await (await post(`${s!.url}/v1/chat/completions`, { messages: [{ role: "user", content: "again" }] })).json();
    expect(r2.choices[0].message.content).toBe("You said: again");
    await expect(runScriptedLLMServerCli(["--bogus"], () => {})).rejects.toThrow(/Unknown argument --bogus/);
  });
});
