/**
 * The gateway benchmark's reference: the cheapest server that can answer the
 * same load. Bare `node:http`, no framework, no validation, no agent, no
 * storage. Each run reads and parses the request, then writes the same
 * sequence of SSE frames a gateway run writes (metadata, the step events of
 * model call → tool → model call as `messages`/`updates`/`values`, `end`),
 * grouped into the same network writes and separated by the same model
 * latency. Whatever it costs is what Node's HTTP stack and loopback TCP cost
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

/** Shapes of the messages a gateway run streams (same fields, same sizes). */
function aiMessage(id: string, text: string, toolCall: boolean, tokens: { input_tokens: number; output_tokens: number; total_tokens: number }) {
  return {
    type: "ai",
    id,
    content: text,
    additional_kwargs: {},
    response_metadata: { model_name: "scripted", finish_reason: toolCall ? "tool_calls" : "stop" },
    tool_calls: toolCall ? [{ id: "call_1_0", name: "lookup", args: { q: "benchmark" }, type: "tool_call" }] : [],
    invalid_tool_calls: [],
    usage_metadata: tokens,
  };
}

function aiChunk(ai: ReturnType<typeof aiMessage>, toolCall: boolean) {
  return {
    type: "AIMessageChunk",
    id: ai.id,
    content: ai.content,
    additional_kwargs: {},
    response_metadata: { finish_reason: ai.response_metadata.finish_reason },
    tool_calls: [],
    invalid_tool_calls: [],
    tool_call_chunks: toolCall
      ? [
          { type: "tool_call_chunk", index: 0, id: "call_1_0", name: "lookup", args: '{"q":"ben' },
          { type: "tool_call_chunk", index: 0, id: null, name: null, args: 'chmark"}' },
        ]
      : [],
    usage_metadata: ai.usage_metadata,
    name: null,
    chunk_position: "last",
  };
}

async function streamRun(res: http.ServerResponse, threadId: string, input: { messages: Array<Record<string, unknown>> }, latencyMs: number): Promise<void> {
  const runId = randomUUID();
  let seq = 0;
  const extra = { artifacts: [], viewed_images: {}, delegations: [], skill_context: [] };
  const human = { ...input.messages[0], id: randomUUID() };
  const messages: unknown[] = [human];
  const meta = (node: string, step: number) => ({ langgraph_node: node, langgraph_step: step, run_id: runId, thread_id: threadId });
  res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", Connection: "keep-alive" });
  res.write(
    frame("metadata", { run_id: runId, thread_id: threadId }, seq++) +
      frame("updates", { __input__: { messages: [input.messages[0]] } }, seq++) +
      frame("values", { messages, ...extra }, seq++),
  );
  await sleep(latencyMs);
  const ai1 = aiMessage(`run-${randomUUID()}`, "Let me look that up.", true, { input_tokens: 1, output_tokens: 16, total_tokens: 17 });
  messages.push(ai1);
  res.write(
    frame("messages", [aiChunk(ai1, true), meta("model", 1)], seq++) +
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
  };
  messages.push(tool);
  res.write(
    frame("updates", { tools: { messages: [tool] } }, seq++) +
      frame("messages", [tool, meta("tools", 2)], seq++) +
      frame("values", { messages, ...extra }, seq++),
  );
  await sleep(latencyMs);
  const ai2 = aiMessage(`run-${randomUUID()}`, "Here is the final answer based on the lookup result.", false, { input_tokens: 11, output_tokens: 14, total_tokens: 25 });
  messages.push(ai2);
  res.write(
    frame("messages", [aiChunk(ai2, false), meta("model", 3)], seq++) +
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
