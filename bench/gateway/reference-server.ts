/**
 * The gateway benchmark's reference: the cheapest server that can answer the
 * same load. Bare `node:http`, no framework, no validation, no agent, no
 * storage. Each run reads and parses the request, then writes the same
 * sequence of SSE frames a gateway run writes (metadata, the step events of
 * model call → tool → model call as `messages`/`updates`/`values`, `end`),
 * with the same fields, grouped into the same network writes and separated
 * by the same model latency. Whatever it costs is what Node's HTTP stack and loopback TCP cost
 * on this machine, so `gateway wall ÷ reference wall` is the gateway's own
 * overhead and the reference's ratio is the floor for any Node server here.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";

/** A running reference server. */
export interface ReferenceServer {
  url: string;
  close(): Promise<void>;
}

function frame(event: string, data: unknown, seq: number): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\nid: ${Date.now()}-${seq}\n\n`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

type Usage = { input_tokens: number; output_tokens: number; total_tokens: number; input_token_details: object; output_token_details: object };

// The shapes below are the gateway's, field for field (the bench compares the bytes per run of both and warns
// when they drift apart): a reference that wrote less would make the gateway look slower than it is.

/** The stored AI message (`updates` and `values`). */
function aiMessage(id: string, text: string, toolCall: boolean, usage: Usage) {
  return {
    type: "ai",
    id,
    content: text,
    name: null,
    additional_kwargs: {},
    response_metadata: { model_name: "scripted", finish_reason: toolCall ? "tool_calls" : "stop", model_provider: "scripted" },
    tool_calls: toolCall ? [{ id: "call_1_0", name: "lookup", args: { q: "benchmark" }, type: "tool_call" }] : [],
    invalid_tool_calls: [],
    usage_metadata: usage,
  };
}

/** The streamed content chunk of a model call (`messages`). */
function contentChunk(ai: ReturnType<typeof aiMessage>, toolCall: boolean) {
  return {
    type: "AIMessageChunk",
    id: ai.id,
    content: ai.content,
    additional_kwargs: {},
    response_metadata: { model_provider: "scripted" },
    tool_calls: toolCall ? [{ name: "lookup", args: { q: "benchmark" }, id: "call_1_0", type: "tool_call" }] : [],
    invalid_tool_calls: [],
    tool_call_chunks: toolCall
      ? [
          { type: "tool_call_chunk", index: 0, id: "call_1_0", name: "lookup", args: '{"q":"ben' },
          { type: "tool_call_chunk", index: 0, id: null, name: null, args: 'chmark"}' },
        ]
      : [],
    usage_metadata: null,
    name: null,
    chunk_position: null,
  };
}

/** The closing chunk of a model call: finish reason and usage (`messages`). */
function lastChunk(ai: ReturnType<typeof aiMessage>) {
  return {
    type: "AIMessageChunk",
    id: ai.id,
    content: "",
    additional_kwargs: {},
    response_metadata: { finish_reason: ai.response_metadata.finish_reason, model_provider: "scripted", model_name: "scripted" },
    tool_calls: [],
    invalid_tool_calls: [],
    tool_call_chunks: [],
    usage_metadata: ai.usage_metadata,
    name: null,
    chunk_position: "last",
  };
}

function usage(input: number, output: number): Usage {
  return { input_tokens: input, output_tokens: output, total_tokens: input + output, input_token_details: {}, output_token_details: {} };
}

async function streamRun(res: http.ServerResponse, threadId: string, input: { messages: Array<Record<string, unknown>> }, latencyMs: number): Promise<void> {
  const runId = randomUUID();
  let seq = 0;
  const extra = { artifacts: [], viewed_images: {}, delegations: [], skill_context: [] };
  const human = { ...input.messages[0], id: randomUUID() };
  const messages: unknown[] = [human];
  const modelMeta = (step: number) => ({
    thread_id: threadId,
    langgraph_step: step,
    langgraph_node: "model",
    langgraph_triggers: ["branch:to:model"],
    langgraph_path: ["__pregel_pull", "model"],
    langgraph_checkpoint_ns: `model:${runId}:${step}`,
    checkpoint_ns: `model:${runId}:${step}`,
    ls_provider: "scripted",
    ls_model_name: "scripted",
    ls_model_type: "chat",
    ls_temperature: null,
  });
  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", Connection: "keep-alive" });
  res.write(frame("metadata", { run_id: runId, thread_id: threadId }, seq++) + frame("values", { messages, ...extra }, seq++));
  await sleep(latencyMs);
  const ai1 = aiMessage(`lc_run--${randomUUID()}`, "Let me look that up.", true, usage(1, 16));
  messages.push(ai1);
  res.write(
    frame("messages", [contentChunk(ai1, true), modelMeta(1)], seq++) +
      frame("messages", [lastChunk(ai1), modelMeta(1)], seq++) +
      frame("updates", { model: { messages: [ai1] } }, seq++) +
      frame("values", { messages, ...extra }, seq++),
  );
  await nextTick();
  const tool = {
    type: "tool",
    id: randomUUID(),
    content: "result for benchmark",
    name: "lookup",
    additional_kwargs: {},
    response_metadata: {},
    tool_call_id: "call_1_0",
    status: "success",
    artifact: null,
  };
  messages.push(tool);
  const toolMeta = {
    thread_id: threadId,
    langgraph_step: 2,
    langgraph_node: "tools",
    langgraph_triggers: ["__pregel_push"],
    langgraph_path: ["__pregel_push", 0, false],
    langgraph_checkpoint_ns: `tools:${runId}:2`,
  };
  res.write(
    frame("updates", { tools: { messages: [tool] } }, seq++) +
      frame("messages", [tool, toolMeta], seq++) +
      frame("values", { messages, ...extra }, seq++),
  );
  await sleep(latencyMs);
  const ai2 = aiMessage(`lc_run--${randomUUID()}`, "Here is the final answer based on the lookup result.", false, usage(11, 14));
  messages.push(ai2);
  res.write(
    frame("messages", [contentChunk(ai2, false), modelMeta(3)], seq++) +
      frame("messages", [lastChunk(ai2), modelMeta(3)], seq++) +
      frame("updates", { model: { messages: [ai2] } }, seq++) +
      frame("values", { messages, ...extra }, seq++),
  );
  res.end("event: end\ndata: null\n\n");
}

/** Start the reference server on 127.0.0.1; `latencyMs()` is read at each simulated model call. */
export function startReferenceServer(latencyMs: () => number): Promise<ReferenceServer> {
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => {
      body += d;
    });
    req.on("end", () => {
      const url = req.url ?? "";
      if (req.method === "POST" && url === "/api/langgraph/threads") {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ thread_id: randomUUID(), status: "idle", metadata: {}, values: {} }));
        return;
      }
      const m = /^\/api\/langgraph\/threads\/([^/]+)\/runs\/stream$/.exec(url);
      if (req.method === "POST" && m) {
        const parsed = JSON.parse(body) as { input: { messages: Array<Record<string, unknown>> } };
        void streamRun(res, m[1], parsed.input, latencyMs());
        return;
      }
      res.writeHead(404).end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
