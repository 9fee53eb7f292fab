import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClientStreamTranslator,
  RemoteAuthError,
  RemoteConnectionError,
  RemoteDeerFlowClient,
  RemoteHttpError,
  RemoteProtocolError,
  RemoteRunError,
  RemoteTimeoutError,
  ValidationError,
} from "../../src";
import type { ClientStreamEvent, StreamEvent } from "../../src";
import { frame, json, SSE_HEADERS, startFakeServer } from "./remote-fake-server";
import type { FakeRoute, FakeServer } from "./remote-fake-server";

const TOKEN = "dfp_unit-test-secret-0123456789";
const T = "t-remote";

const human = { type: "human", id: "h1", content: "hi", additional_kwargs: {}, response_metadata: {} };
const ai1 = {
  type: "ai",
  id: "a1",
  content: "Echoing.",
  tool_calls: [{ id: "call_e", name: "echo", args: { text: "x" }, type: "tool_call" }],
  invalid_tool_calls: [],
  usage_metadata: { input_tokens: 1, output_tokens: 15, total_tokens: 16 },
};
const tool1 = { type: "tool", id: "tm1", content: "echo: x", name: "echo", tool_call_id: "call_e", status: "success", artifact: null };
const ai2 = { type: "ai", id: "a2", content: "Final answer. ✓", tool_calls: [], invalid_tool_calls: [], usage_metadata: { input_tokens: 5, output_tokens: 4, total_tokens: 9 } };
const chunk = (id: string, content: string, extra: Record<string, unknown> = {}) => ({ type: "AIMessageChunk", id, content, tool_calls: [], tool_call_chunks: [], usage_metadata: null, ...extra });
const state = (...messages: unknown[]) => ({ messages, artifacts: [], title: null });

/** The harness events of one run with a tool step, as the gateway streams them (`messages-tuple` goes out as `messages`). */
const RUN_EVENTS: StreamEvent[] = [
  { mode: "values", ns: [], data: state(human) },
  { mode: "messages", ns: [], data: [chunk("a1", "Echoing.", { tool_call_chunks: [{ index: 0, id: "call_e", name: "echo", args: '{"text":"x"}' }] }), { langgraph_node: "model" }] },
  { mode: "messages", ns: [], data: [chunk("a1", "", { chunk_position: "last", usage_metadata: ai1.usage_metadata }), {}] },
  { mode: "values", ns: [], data: state(human, ai1) },
  { mode: "custom", ns: [], data: { type: "echo_progress", text: "x" } },
  { mode: "messages", ns: ["task:1"], data: [chunk("sub", "sub-agent text"), {}] },
  { mode: "messages", ns: [], data: [tool1, {}] },
  { mode: "values", ns: [], data: state(human, ai1, tool1) },
  { mode: "messages", ns: [], data: [chunk("a2", "Final "), {}] },
  { mode: "messages", ns: [], data: [chunk("a2", "answer. ✓"), {}] },
  { mode: "messages", ns: [], data: [chunk("a2", "", { chunk_position: "last", usage_metadata: ai2.usage_metadata }), {}] },
  { mode: "values", ns: [], data: state(human, ai1, tool1, ai2) },
];

/** The SSE text of a run, with the gateway's event names, ids and a heartbeat. */
function runSse(events: StreamEvent[], opts: { runId?: string; error?: { message: string; name: string }; end?: boolean } = {}): string {
  let out = frame("metadata", { run_id: opts.runId ?? "r1", thread_id: T }, "1-0");
  events.forEach((e, i) => {
    const name = e.mode === "messages" ? "messages" : e.mode;
    out += frame(e.ns.length ? [name, ...e.ns].join("|") : name, e.data, `1-${i + 1}`);
    if (i === 2) out += ": heartbeat\n\n";
  });
  if (opts.error) out += frame("error", opts.error);
  if (opts.end !== false) out += "event: end\ndata: null\n\n";
  return out;
}

/** Write `text` in 7-byte pieces (frames and UTF-8 sequences split across writes). */
function sse(text: string, then: "end" | "hold" = "end"): FakeRoute {
  return async (_req, res) => {
    res.writeHead(200, { ...SSE_HEADERS, "content-location": `/api/threads/${T}/runs/r1` });
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 7) res.write(bytes.subarray(i, i + 7));
    if (then === "end") res.end();
  };
}

/** The events the embedded client yields for the same harness events. */
function embeddedEvents(events: StreamEvent[], historical: string[] = []): ClientStreamEvent[] {
  const tr = new ClientStreamTranslator(new Set(historical));
  return events.flatMap((e) => tr.translate(e));
}

const threadJson = { thread_id: T, status: "idle", created_at: "2026-01-01T00:00:00+00:00", updated_at: "2026-01-01T00:00:00+00:00", metadata: {}, values: {}, interrupts: {} };

function gatewayRoutes(extra: Record<string, FakeRoute> = {}): Record<string, FakeRoute> {
  return {
    "POST /api/threads": json(200, threadJson),
    [`GET /api/threads/${T}/state`]: json(404, { detail: `Thread ${T} not found` }),
    [`POST /api/threads/${T}/runs/stream`]: sse(runSse(RUN_EVENTS)),
    [`GET /api/threads/${T}/runs/r1`]: json(200, { run_id: "r1", thread_id: T, status: "success", error: null }),
    ...extra,
  };
}

let server: FakeServer | undefined;
const tmpDirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const d of tmpDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function collect(it: AsyncIterable<ClientStreamEvent>): Promise<ClientStreamEvent[]> {
  const out: ClientStreamEvent[] = [];
  for await (const ev of it) out.push(ev);
  return out;
}

describe("RemoteDeerFlowClient.stream over the gateway's SSE", () => {
  it("yields exactly the embedded client's events for the same run, then `end` with usage, ids and the stored status", async () => {
    server = await startFakeServer(gatewayRoutes());
    const client = new RemoteDeerFlowClient({ baseUrl: server.url + "/", token: TOKEN, headers: { "x-trace": "abc" }, modelName: "gpt-test" });
    const events = await collect(client.stream("hi", { threadId: T, planMode: true, context: { max_concurrent_subagents: 2 } }));
    expect(events.slice(0, -1)).toEqual(embeddedEvents(RUN_EVENTS));
    expect(events.at(-1)).toEqual({ type: "end", data: { usage: { input_tokens: 6, output_tokens: 19, total_tokens: 25 }, thread_id: T, run_id: "r1", status: "success" } });
    // AI text as deltas, the tool call and the tool result once each, sub-agent events skipped
    const tuples = events.filter((e) => e.type === "messages-tuple").map((e) => e.data);
    expect(tuples.filter((d) => d.type === "ai" && d.id === "a2").map((d) => d.content).join("")).toBe("Final answer. ✓");
    expect(tuples.filter((d) => Array.isArray(d.tool_calls))).toHaveLength(1);
    expect(tuples.filter((d) => d.type === "tool")).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain("sub-agent text");

    const calls = server.seen.map((r) => `${r.method} ${r.path}`);
    expect(calls).toEqual(["POST /api/threads", `GET /api/threads/${T}/state`, `POST /api/threads/${T}/runs/stream`, `GET /api/threads/${T}/runs/r1`]);
    const run = server.seen[2];
    expect(run.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(run.headers["x-trace"]).toBe("abc");
    expect(run.headers.accept).toBe("text/event-stream");
    expect(JSON.parse(run.body.toString())).toEqual({
      assistant_id: "lead_agent",
      input: { messages: [{ type: "human", content: "hi", additional_kwargs: {} }] },
      config: {},
      context: { max_concurrent_subagents: 2, model_name: "gpt-test", is_plan_mode: true, subagent_enabled: false },
      stream_mode: ["values", "messages-tuple", "custom"],
      on_disconnect: "cancel",
    });
    expect(JSON.parse(server.seen[0].body.toString())).toEqual({ thread_id: T, metadata: {} });
  });

  it("a continued thread does not re-emit earlier messages; chat() answers the last AI text", async () => {
    const earlier = [{ ...human, id: "h0" }, { ...ai2, id: "a0", content: "Old answer." }];
    const events = RUN_EVENTS.map((e) => (e.mode === "values" ? { ...e, data: { ...(e.data as object), messages: [...earlier, ...(e.data as { messages: unknown[] }).messages] } } : e));
    server = await startFakeServer(gatewayRoutes({ [`GET /api/threads/${T}/state`]: json(200, { values: { messages: earlier } }), [`POST /api/threads/${T}/runs/stream`]: sse(runSse(events)) }));
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    const streamed = await collect(client.stream("again", { threadId: T }));
    expect(streamed.slice(0, -1)).toEqual(embeddedEvents(events, ["h0", "a0"]));
    expect(JSON.stringify(streamed.filter((e) => e.type === "messages-tuple"))).not.toContain("Old answer.");
    expect(server.seen[0].headers.authorization).toBeUndefined();
    expect(await client.chat("again", { threadId: T })).toBe("Final answer. ✓");
  });

  it("a run that failed throws RemoteRunError after yielding its events (error event, or a stored error status)", async () => {
    server = await startFakeServer(gatewayRoutes({ [`POST /api/threads/${T}/runs/stream`]: sse(runSse(RUN_EVENTS.slice(0, 4), { error: { message: "model exploded", name: "ModelCallError" } })) }));
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    const seen: ClientStreamEvent[] = [];
    const err = await (async () => {
      for await (const ev of client.stream("hi", { threadId: T })) seen.push(ev);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteRunError);
    expect(err).toMatchObject({ code: "run_failed", message: "model exploded", errorName: "ModelCallError", runId: "r1", threadId: T });
    expect(seen).toEqual(embeddedEvents(RUN_EVENTS.slice(0, 4)));

    server.routes.set(`POST /api/threads/${T}/runs/stream`, sse(runSse(RUN_EVENTS)));
    server.routes.set(`GET /api/threads/${T}/runs/r1`, json(200, { run_id: "r1", status: "timeout", error: "Run exceeded 1000 ms" }));
    await expect(collect(client.stream("hi", { threadId: T }))).rejects.toMatchObject({ code: "run_failed", message: "Run exceeded 1000 ms" });
  });

  it("a stream cut before `end` is a RemoteConnectionError, not a silent success", async () => {
    server = await startFakeServer(gatewayRoutes({ [`POST /api/threads/${T}/runs/stream`]: sse(runSse(RUN_EVENTS.slice(0, 2), { end: false })) }));
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    await expect(collect(client.stream("hi", { threadId: T }))).rejects.toThrow(RemoteConnectionError);
  });

  it("aborting the signal disconnects (the server sees the request close) and rejects with the abort", async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    server = await startFakeServer(
      gatewayRoutes({
        [`POST /api/threads/${T}/runs/stream`]: async (req, res, raw) => {
          res.on("close", () => closed());
          await sse(runSse(RUN_EVENTS.slice(0, 1), { end: false }), "hold")(req, res, raw);
        },
      }),
    );
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    const ac = new AbortController();
    const err = await (async () => {
      for await (const ev of client.stream("hi", { threadId: T, signal: ac.signal })) if (ev.type === "values") ac.abort();
    })().catch((e: unknown) => e);
    expect((err as Error).name).toBe("AbortError");
    await serverSawClose;
  });

  it("stopping the iteration early closes the connection too", async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => (closed = r));
    server = await startFakeServer(
      gatewayRoutes({
        [`POST /api/threads/${T}/runs/stream`]: async (req, res, raw) => {
          res.on("close", () => closed());
          await sse(runSse(RUN_EVENTS.slice(0, 1), { end: false }), "hold")(req, res, raw);
        },
      }),
    );
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    for await (const ev of client.stream("hi", { threadId: T })) if (ev.type === "values") break;
    await serverSawClose;
  });

  it("a silent stream times out (streamIdleTimeoutMs) and so does a request without an answer (timeoutMs)", async () => {
    server = await startFakeServer(gatewayRoutes({ [`POST /api/threads/${T}/runs/stream`]: sse(runSse(RUN_EVENTS.slice(0, 1), { end: false }), "hold") }));
    const idle = new RemoteDeerFlowClient({ baseUrl: server.url, streamIdleTimeoutMs: 150 });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const ev of idle.stream("hi", { threadId: T })) seen.push(ev.type);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteTimeoutError);
    expect((err as Error).message).toMatch(/silent for 150 ms/);
    expect(seen).toEqual(["values"]);

    // Time the consumer spends between events is not silence. The stream stays open (no `end`) until the consumer,
    // after working longer than the idle limit, asks the server to finish it.
    let held: import("node:http").ServerResponse | undefined;
    server.routes.set(`POST /api/threads/${T}/runs/stream`, async (req, res, raw) => {
      held = res;
      await sse(runSse(RUN_EVENTS, { end: false }), "hold")(req, res, raw);
    });
    server.routes.set("POST /release", (_req, res) => {
      held!.end("event: end\ndata: null\n\n");
      res.writeHead(204).end();
    });
    const slowConsumer: string[] = [];
    for await (const ev of idle.stream("hi", { threadId: T })) {
      slowConsumer.push(ev.type);
      if (slowConsumer.length === 1) {
        await new Promise((r) => setTimeout(r, 400)); // the consumer's own work, longer than the idle limit
        await fetch(`${server.url}/release`, { method: "POST" });
      }
    }
    expect(slowConsumer.at(-1)).toBe("end");

    server.routes.set("GET /api/models", () => undefined); // never answers
    const slow = new RemoteDeerFlowClient({ baseUrl: server.url, timeoutMs: 100 });
    await expect(slow.listModels()).rejects.toMatchObject({ code: "remote_timeout", timeoutMs: 100 });
  });
});

describe("RemoteDeerFlowClient errors", () => {
  it("401 and 403 are RemoteAuthErrors worded for the fix; other statuses keep the server's status and detail", async () => {
    server = await startFakeServer({
      "POST /api/threads/search": json(401, { detail: { code: "token_invalid", message: "Invalid or revoked access token" } }),
      "POST /api/threads": json(403, { detail: "This access token lacks the 'run' scope needed for POST /threads (it has: read)." }),
      "PUT /api/mcp/config": json(403, { detail: "Admin privileges required" }),
      "GET /api/threads/nope": json(404, { detail: "Thread nope not found" }),
      "POST /api/memory/facts": json(422, { detail: [{ type: "missing", loc: ["body", "content"], msg: "Field required" }] }),
      "GET /api/models": json(500, { detail: `Internal error near ${TOKEN}` }),
      "DELETE /api/threads/x": json(403, { detail: "CSRF token missing. Include X-CSRF-Token header." }),
      "GET /api/mcp/config": json(403, { detail: "Admin privileges required" }, { "www-authenticate": 'Bearer error="insufficient_scope", scope="admin"' }),
    });
    const client = new RemoteDeerFlowClient({ baseUrl: server.url, token: TOKEN });
    const refused = await client.listThreads().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RemoteAuthError);
    expect(refused).toMatchObject({ status: 401, code: "token_refused", reason: "token_refused", detail: { code: "token_invalid" } });
    expect((refused as Error).message).toMatch(/^The token was refused: Invalid or revoked access token \(HTTP 401 from POST \/api\/threads\/search\)/);

    const scope = await collect(client.stream("hi")).catch((e: unknown) => e);
    expect(scope).toMatchObject({ status: 403, code: "insufficient_scope", requiredScope: "run" });
    expect((scope as Error).message).toMatch(/^The token lacks scope run: /);

    await expect(client.updateMcpConfig({})).rejects.toMatchObject({ status: 403, code: "forbidden", message: expect.stringMatching(/^The server refused the request: Admin privileges required/) });
    await expect(client.getThread("nope")).rejects.toMatchObject({ status: 404, code: "http_404", detail: "Thread nope not found", method: "GET", path: "/api/threads/nope" });
    await expect(client.createMemoryFact("")).rejects.toThrow(/HTTP 422: body\.content: Field required/);
    const internal = await client.listModels().catch((e: unknown) => e);
    expect(internal).toBeInstanceOf(RemoteHttpError);
    // a server that echoes the token back never gets it into the error
    expect(JSON.stringify({ m: (internal as Error).message, d: (internal as RemoteHttpError).detail })).not.toContain(TOKEN);
    for (const e of [refused, scope]) expect((e as Error).message).not.toContain(TOKEN);

    // RFC 6750's header names the scope when the text does not
    await expect(client.getMcpConfig()).rejects.toMatchObject({ code: "insufficient_scope", requiredScope: "admin", message: expect.stringMatching(/^The token lacks scope admin: Admin privileges required/) });

    const anonymous = new RemoteDeerFlowClient({ baseUrl: server.url });
    await expect(anonymous.listThreads()).rejects.toMatchObject({ code: "not_authenticated", message: expect.stringMatching(/requires sign-in/) });
    // a write without a token meets DeerFlow's CSRF check before sign-in: still "sign in", not a CSRF puzzle
    await expect(anonymous.deleteThread("x")).rejects.toMatchObject({ status: 403, code: "not_authenticated", message: expect.stringMatching(/^The server requires sign-in: CSRF token missing/) });
    // with a token the same 403 is not about scopes
    await expect(client.deleteThread("x")).rejects.toMatchObject({ status: 403, code: "forbidden" });
  });

  it("a redirect is not followed: the token never reaches another address", async () => {
    const other = await startFakeServer({ "GET /api/models": json(200, { models: [], token_usage: { enabled: true } }) });
    try {
      server = await startFakeServer({ "GET /api/models": json(307, { detail: "moved" }, { location: `${other.url}/api/models` }) });
      const client = new RemoteDeerFlowClient({ baseUrl: server.url, token: TOKEN });
      await expect(client.listModels()).rejects.toThrow(/redirected GET \/api\/models to http:\/\/127\.0\.0\.1:\d+\/api\/models/);
      expect(other.seen).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("checks its options before sending anything", () => {
    expect(() => new RemoteDeerFlowClient({ baseUrl: "http://deerflow.example.com", token: TOKEN })).toThrow(/plain http:\/\/ to deerflow\.example\.com/);
    expect(new RemoteDeerFlowClient({ baseUrl: "http://deerflow.example.com", token: TOKEN, allowInsecureHttp: true }).baseUrl).toBe("http://deerflow.example.com");
    // A *.localhost name is resolved by the system resolver (DNS on a "files dns" host), not pinned to loopback.
    expect(() => new RemoteDeerFlowClient({ baseUrl: "http://gateway.localhost:2026", token: TOKEN })).toThrow(/plain http:\/\/ to gateway\.localhost/);
    expect(new RemoteDeerFlowClient({ baseUrl: "http://localhost:2026", token: TOKEN }).baseUrl).toBe("http://localhost:2026");
    expect(new RemoteDeerFlowClient({ baseUrl: "http://[::1]:2026", token: TOKEN }).baseUrl).toBe("http://[::1]:2026");
    expect(new RemoteDeerFlowClient({ baseUrl: "https://example.com/deerflow//", token: TOKEN }).baseUrl).toBe("https://example.com/deerflow");
    expect(() => new RemoteDeerFlowClient({ baseUrl: "http://u:p@127.0.0.1:1" })).toThrow(ValidationError);
    expect(() => new RemoteDeerFlowClient({ baseUrl: "ftp://127.0.0.1" })).toThrow(/http:\/\/ or https:\/\//);
    const bad = (() => {
      try {
        new RemoteDeerFlowClient({ baseUrl: "http://127.0.0.1:1", token: "dfp_abc\r\nx-evil: 1" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(bad).toMatchObject({ code: "invalid_token" });
    expect(bad!.message).not.toContain("dfp_abc");
  });

  it("an unreachable server is a RemoteConnectionError naming the address; a non-gateway answer a RemoteProtocolError", async () => {
    const gone = await startFakeServer();
    const url = gone.url;
    await gone.close();
    await expect(new RemoteDeerFlowClient({ baseUrl: url }).listModels()).rejects.toMatchObject({ code: "remote_unreachable", message: expect.stringContaining(`${url} (GET /api/models): ECONNREFUSED`) });

    server = await startFakeServer({
      "GET /api/models": (_req, res) => void res.writeHead(200, { "content-type": "text/html" }).end("<html>frontend</html>"),
      "POST /api/threads": json(200, threadJson),
      [`POST /api/threads/${T}/runs/stream`]: json(200, { not: "a stream" }),
      "GET /api/v1/auth/me": json(200, { unexpected: true }),
    });
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    await expect(client.listModels()).rejects.toThrow(RemoteProtocolError);
    await expect(client.listModels()).rejects.toThrow(/text\/html, not JSON/);
    await expect(collect(client.stream("hi", { threadId: T }))).rejects.toThrow(/not an event stream/);
    await expect(client.getCurrentUser()).rejects.toThrow(/unexpected shape \(id:/);
  });
});

describe("RemoteDeerFlowClient REST helpers", () => {
  it("uploads files of this machine as multipart, lists and deletes them, and reads artifacts with the file's own MIME type", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "remote-up-"));
    tmpDirs.push(dir);
    fs.writeFileSync(path.join(dir, "notes.md"), "# Notes ü\n");
    fs.writeFileSync(path.join(dir, "data.bin"), Buffer.from([0, 1, 2, 255]));
    let received: Array<{ name: string; text: string }> = [];
    server = await startFakeServer({
      [`POST /api/threads/${T}/uploads`]: async (req, res) => {
        const form = await new Response(new Uint8Array(req.body), { headers: { "content-type": req.headers["content-type"]! } }).formData();
        received = await Promise.all(form.getAll("files").map(async (f) => ({ name: (f as File).name, text: await (f as File).text() })));
        const files = received.map((f) => ({ filename: f.name, size: Buffer.byteLength(f.text), path: `/x/${f.name}`, virtual_path: `/mnt/user-data/uploads/${f.name}`, artifact_url: `/api/threads/${T}/artifacts/mnt/user-data/uploads/${f.name}` }));
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ success: true, files, message: `Successfully uploaded ${files.length} file(s)`, skipped_files: [] }));
      },
      [`GET /api/threads/${T}/uploads/list`]: json(200, { files: [], count: 0 }),
      [`DELETE /api/threads/${T}/uploads/a%20b.md`]: json(200, { success: true, message: "Deleted a b.md" }),
      [`GET /api/threads/${T}/artifacts/mnt/user-data/outputs/report.md`]: (_req, res) => void res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("# Report"),
    });
    const client = new RemoteDeerFlowClient({ baseUrl: server.url, token: TOKEN });
    const up = await client.uploadFiles(T, [path.join(dir, "notes.md"), path.join(dir, "data.bin")]);
    expect(up.files.map((f) => f.virtual_path)).toEqual(["/mnt/user-data/uploads/notes.md", "/mnt/user-data/uploads/data.bin"]);
    expect(received[0]).toEqual({ name: "notes.md", text: "# Notes ü\n" });
    expect(server.seen[0].headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(server.seen[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
    await expect(client.uploadFiles(T, [path.join(dir, "missing.txt")])).rejects.toMatchObject({ code: "upload_source_unreadable", status: 400 });
    expect(await client.listUploads(T)).toEqual({ files: [], count: 0 });
    expect(await client.deleteUpload(T, "a b.md")).toEqual({ success: true, message: "Deleted a b.md" });
    const art = await client.getArtifact(T, "/mnt/user-data/outputs/report.md");
    expect(art.bytes.toString()).toBe("# Report");
    // the embedded client's type (from the file), not the gateway's served `text/plain`
    expect(art.mimeType).toBe("text/markdown");
    await expect(client.getThread("../etc")).rejects.toMatchObject({ code: "invalid_thread_id" });
  });

  it("memory, MCP, models and me go to the gateway's routes; the injected fetch carries every call", async () => {
    const doc = { version: "1.0", facts: [] };
    server = await startFakeServer({
      "GET /api/memory": json(200, doc),
      "POST /api/memory/facts": json(200, { ...doc, facts: [{ id: "f1" }] }),
      "PATCH /api/memory/facts/f%201": json(200, doc),
      "GET /api/memory/status": json(200, { config: { enabled: true }, data: doc, updater: {}, user_enabled: true }),
      "GET /api/mcp/config": json(200, { mcp_servers: {} }),
      "PUT /api/mcp/config": json(200, { mcp_servers: { s: { enabled: true } } }),
      "GET /api/mcp/status": json(200, { servers: [] }),
      "GET /api/models": json(200, { models: [{ name: "m", model: "m", display_name: null, description: null, supports_thinking: false, supports_reasoning_effort: false }], token_usage: { enabled: true } }),
      "GET /api/v1/auth/me": json(200, { id: "default", email: "default@test.local", system_role: "admin", needs_setup: false, oauth_provider: null }),
    });
    const calls: string[] = [];
    const client = new RemoteDeerFlowClient({
      baseUrl: server.url,
      fetch: (input, init) => {
        calls.push(`${init?.method} ${String(input)}`);
        return fetch(input, init);
      },
    });
    expect(await client.getMemory("my-agent")).toEqual(doc);
    expect((await client.createMemoryFact("likes tea")).facts).toEqual([{ id: "f1" }]);
    await client.updateMemoryFact("f 1", { confidence: 0.9 });
    expect((await client.getMemoryStatus()).data).toEqual(doc);
    expect(await client.getMcpConfig()).toEqual({ mcp_servers: {} });
    await client.updateMcpConfig({ s: { command: "x" } });
    expect(await client.getMcpStatus()).toEqual({ servers: [] });
    expect((await client.listModels()).models[0].name).toBe("m");
    expect((await client.getCurrentUser()).id).toBe("default");
    expect(calls[0]).toBe(`GET ${server.url}/api/memory?agent_name=my-agent`);
    expect(calls).toHaveLength(9);
    expect(JSON.parse(server.seen[1].body.toString())).toEqual({ content: "likes tea", category: "context", confidence: 0.5 });
    expect(JSON.parse(server.seen[5].body.toString())).toEqual({ mcp_servers: { s: { command: "x" } } });
    expect(server.seen[6].path).toBe("/api/mcp/status?wait=true");
  });

  it("close() aborts calls in flight and refuses later ones", async () => {
    server = await startFakeServer({ "GET /api/models": () => undefined });
    const client = new RemoteDeerFlowClient({ baseUrl: server.url });
    const pending = client.listModels();
    await new Promise((r) => setImmediate(r));
    await client.close();
    await expect(pending).rejects.toMatchObject({ code: "remote_unreachable", message: "The client was closed" });
    await expect(client.listModels()).rejects.toMatchObject({ message: "The client was closed" });
  });
});
