import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { anthropicErrorFor, anthropicMessage, writeAnthropicStream } from "./anthropic-wire";
import { concreteAnswer, chunksOf } from "./answer";
import { echoStep } from "./echo-script";
import { openAICompletion, openAIErrorFor, sendJson, writeOpenAIStream } from "./openai-wire";
import type { SseWriter } from "./openai-wire";
import { isFault, redactHeaders } from "./script";
import { hashedEmbedding, sendEmbeddings } from "./embeddings-wire";
import type { ScriptedEmbedFn } from "./embeddings-wire";
import type { HttpScriptStep, HttpScriptedFault, HttpScriptedResponse, RecordedLLMRequest } from "./script";

/** Options of {@link startScriptedLLMServer}. */
export interface ScriptedLLMServerOptions {
  /** Steps answered in order, across both APIs. Default: the echo model forever. */
  script?: HttpScriptStep[];
  /** Port on 127.0.0.1 (0 = any free port, the default). */
  port?: number;
  /** When the script runs out: `error` (HTTP 500 explaining it, default), `repeat-last`, or `echo`. */
  onExhausted?: "error" | "repeat-last" | "echo";
  /** Model ids listed by `GET /v1/models` (default `["scripted"]`). */
  models?: string[];
  /** Called for each request with a printable (redacted) summary. */
  log?: (line: string) => void;
  /** Vectors for `POST /v1/embeddings` (default: a deterministic hashed bag of words). */
  embed?: ScriptedEmbedFn;
}

/** A running scripted server. */
export interface ScriptedLLMServer {
  /** Base URL without the API version, e.g. `http://127.0.0.1:43210`. Use `${url}/v1` as base_url. */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedLLMRequest[];
  /** Append steps to the script. */
  push(...steps: HttpScriptStep[]): void;
  /** Steps not used yet. */
  readonly remaining: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Start a scripted OpenAI-compatible (`POST /v1/chat/completions`, `GET /v1/models`)
 * and Anthropic (`POST /v1/messages`) HTTP server on 127.0.0.1. It is a test
 * double that replays a script — text, reasoning, tool calls, usage — and
 * injects faults (429 + Retry-After, 500, 401, quota, hang, malformed chunk,
 * cut stream). It is not a model.
 */
export async function startScriptedLLMServer(options: ScriptedLLMServerOptions = {}): Promise<ScriptedLLMServer> {
  const steps: HttpScriptStep[] = [...(options.script ?? [])];
  const defaultEcho = options.script === undefined;
  const requests: RecordedLLMRequest[] = [];
  const sockets = new Set<Socket>();
  let cursor = 0;
  const models = options.models ?? ["scripted"];

  const nextStep = (rec: RecordedLLMRequest, index: number): HttpScriptStep | null => {
    let step: HttpScriptStep | undefined;
    if (cursor < steps.length) step = steps[cursor++];
    else if (defaultEcho || options.onExhausted === "echo") step = echoStep;
    else if (options.onExhausted === "repeat-last" && steps.length) step = steps[steps.length - 1];
    else return null;
    while (typeof step === "function") step = step(rec, index);
    return step as HttpScriptStep;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname.replace(/\/+$/, "");
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
      return sendJson(res, 200, { object: "list", data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted" })) });
    }
    if (req.method === "GET" && (path === "" || path === "/health")) return sendJson(res, 200, { status: "ok", kind: "scripted-llm-test-double" });
    if (req.method === "POST" && /\/(v1\/)?embeddings$/.test(path)) return readBody(req).then((t) => sendEmbeddings(res, parseJsonObject(t), options.embed ?? ((x) => hashedEmbedding(x))));
    const api = /\/(v1\/)?chat\/completions$/.test(path) ? "openai" : /\/(v1\/)?messages$/.test(path) ? "anthropic" : "other";
    if (req.method !== "POST" || api === "other") return sendJson(res, 404, { error: { message: `No route for ${req.method} ${path}`, type: "not_found" } });

    const text = await readBody(req);
    let body: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(text) as unknown;
      body = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
    } catch {
      body = null;
    }
    const rec = { method: req.method, path, headers: redactHeaders(req.headers), body, api } as RecordedLLMRequest;
    Object.defineProperty(rec, "credentials", {
      value: { authorization: req.headers.authorization, apiKey: req.headers["x-api-key"] as string | undefined },
      enumerable: false,
    });
    const index = requests.length;
    requests.push(rec);
    options.log?.(`${req.method} ${path} #${index} model=${String(body?.model ?? "?")} stream=${String(body?.stream ?? false)} auth=${rec.headers.authorization ?? rec.headers["x-api-key"] ?? "none"}`);

    if (!body) {
      const e = api === "anthropic" ? anthropicErrorFor("bad_request", "Request body is not valid JSON.") : openAIErrorFor("bad_request", "Request body is not valid JSON.");
      return sendJson(res, e.status, e.body);
    }
    const step = nextStep(rec, index);
    if (step === null) {
      const message = `Scripted server: script exhausted after ${steps.length} step(s).`;
      const e = api === "anthropic" ? anthropicErrorFor("server_error", message) : openAIErrorFor("server_error", message);
      return sendJson(res, e.status, e.body);
    }
    const model = String(body.model ?? models[0]);
    const stream = body.stream === true;
    const id = api === "anthropic" ? `msg_scripted_${index}` : `chatcmpl-scripted-${index}`;

    if (isFault(step)) return handleFault(step, api, res, req, stream, model, id);

    const resp: HttpScriptedResponse = typeof step === "string" ? { text: step } : (step as HttpScriptedResponse);
    if (resp.delayMs) await sleep(resp.delayMs);
    const answer = concreteAnswer(resp, body, index, api === "anthropic" ? "toolu_scripted_" : "call_scripted_");
    if (!stream) {
      return sendJson(res, 200, api === "anthropic" ? anthropicMessage(answer, model, id) : openAICompletion(answer, model, id));
    }
    const write = sseWriter(res, answer.chunkDelayMs);
    if (api === "anthropic") await writeAnthropicStream(write, answer, model, id);
    else {
      const so = body.stream_options as { include_usage?: boolean } | undefined;
      await writeOpenAIStream(write, answer, model, id, so?.include_usage === true);
    }
    res.end();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `Scripted server failure: ${String(err)}`, type: "server_error" } });
      else res.destroy();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    push: (...more) => {
      steps.push(...more);
    },
    get remaining() {
      return Math.max(0, steps.length - cursor);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function sseWriter(res: ServerResponse, delayMs: number): SseWriter {
  if (!res.headersSent) res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  return async (data, event) => {
    if (delayMs) await sleep(delayMs);
    res.write(`${event ? `event: ${event}\n` : ""}data: ${data}\n\n`);
  };
}

/** The fault's message with the request's raw credential headers appended (`echoCredentials`). */
function withEchoedCredentials(fault: HttpScriptedFault, req: IncomingMessage): string | undefined {
  if (!fault.echoCredentials) return fault.message;
  const echoed = ["authorization", "x-api-key", "api-key"].flatMap((h) => (typeof req.headers[h] === "string" ? [`${h}: ${req.headers[h]}`] : []));
  return `${fault.message ?? "Invalid request."} Received headers: ${echoed.join(", ")}`;
}

async function handleFault(
  fault: HttpScriptedFault,
  api: "openai" | "anthropic",
  res: ServerResponse,
  req: IncomingMessage,
  stream: boolean,
  model: string,
  id: string,
): Promise<void> {
  switch (fault.fault) {
    case "hang":
      // Never answer; the client must time out or abort.
      await new Promise<void>((resolve) => {
        req.socket.once("close", () => resolve());
      });
      return;
    case "malformed_chunk":
    case "cut_stream": {
      const write = sseWriter(res, 0);
      const partial = fault.partialText ?? "Partial answer";
      if (api === "anthropic") {
        await write(JSON.stringify({ type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }), "message_start");
        await write(JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }), "content_block_start");
        for (const t of chunksOf(partial)) await write(JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: t } }), "content_block_delta");
        if (fault.fault === "malformed_chunk") await write('{"type":"content_block_delta","index":0,"delta":{"type":"text_del', "content_block_delta");
      } else {
        const chunk = (delta: Record<string, unknown>) => JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: null }] });
        await write(chunk({ role: "assistant", content: "" }));
        for (const t of chunksOf(partial)) await write(chunk({ content: t }));
        if (fault.fault === "malformed_chunk") await write('{"id":"x","choices":[{"index":0,"delta":{"content":');
      }
      await sleep(20);
      if (fault.fault === "cut_stream") res.destroy();
      else res.end();
      return;
    }
    default: {
      const e = api === "anthropic" ? anthropicErrorFor(fault.fault, withEchoedCredentials(fault, req)) : openAIErrorFor(fault.fault, withEchoedCredentials(fault, req));
      const headers: Record<string, string> = {};
      if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
      void stream;
      return sendJson(res, e.status, e.body, headers);
    }
  }
}
