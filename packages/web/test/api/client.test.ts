import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client";
import { createApiFetch } from "../../src/api/http";
import { readSse } from "../../src/api/sse";
import { endsInErrorAnswer } from "../../src/stream/reducer";

const frame = (event: string, data: unknown, id?: string) => `event: ${event}\ndata: ${JSON.stringify(data)}\n${id ? `id: ${id}\n` : ""}\n`;

/** A loopback gateway: the run stream breaks after two frames; the re-join resumes after Last-Event-ID. */
function gateway() {
  const seen: Array<{ method: string; url: string; lastEventId?: string; body?: string }> = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", lastEventId: req.headers["last-event-id"] as string | undefined, body });
      const sse = { "content-type": "text/event-stream; charset=utf-8" };
      if (req.method === "POST" && req.url === "/api/langgraph/threads/T/runs/stream") {
        res.writeHead(200, { ...sse, "content-location": "/api/threads/T/runs/R1" });
        res.write(frame("metadata", { run_id: "R1" }, "1-0") + ": heartbeat\n\n" + frame("values", { n: 1 }, "1-1"));
        // the connection drops mid-run (a proxy, a network switch)
        setImmediate(() => res.socket?.destroy());
        return;
      }
      if (req.method === "GET" && req.url?.startsWith("/api/langgraph/threads/T/runs/R1/stream")) {
        res.writeHead(200, sse);
        res.end(frame("values", { n: 2 }, "1-2") + "event: end\ndata: null\n\n");
        return;
      }
      if (req.url === "/api/langgraph/threads/missing/state") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "Thread missing not found" }));
        return;
      }
      res.writeHead(500);
      res.end();
    });
  });
  return { server, seen };
}

describe("the UI's API client", () => {
  const { server, seen } = gateway();
  let client: ApiClient;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new ApiClient(`${origin}/api/langgraph`, createApiFetch({ fetch: globalThis.fetch, cookies: () => "csrf_token=tok", origin: () => origin }), 0);
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("streams a run, names it from Content-Location, and re-joins after the last frame id when the connection drops", async () => {
    const created: string[] = [];
    const parts = [];
    for await (const p of client.runs.stream("T", "lead_agent", { body: { input: { messages: [] }, stream_mode: ["values", "custom"] }, onRunCreated: (r) => created.push(r.run_id) })) parts.push(p);
    expect(created).toEqual(["R1"]);
    expect(parts.map((p) => [p.event, p.id])).toEqual([
      ["metadata", "1-0"],
      ["values", "1-1"],
      ["values", "1-2"],
      ["end", "1-2"],
    ]);
    expect(parts[2].data).toEqual({ n: 2 });
    const post = seen.find((s) => s.method === "POST")!;
    expect(JSON.parse(post.body!)).toMatchObject({ assistant_id: "lead_agent", stream_mode: ["values", "custom"] });
    const join = seen.find((s) => s.method === "GET")!;
    expect(join.lastEventId).toBe("1-1");
    expect(join.url).toBe("/api/langgraph/threads/T/runs/R1/stream?stream_mode=values&stream_mode=custom");
  });

  it("a failed request is an ApiError with the gateway's status and detail", async () => {
    await expect(client.threads.getState("missing")).rejects.toMatchObject({ name: "ApiError", status: 404, message: "Thread missing not found" });
  });
});

describe("the SSE reader", () => {
  const body = (chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch));
        c.close();
      },
    });

  it("joins data lines, skips comments, keeps the id, and handles CRLF split across chunks", async () => {
    const out = [];
    for await (const p of readSse(body(["event: custom\r", "\ndata: {\"a\":\r\ndata: 1}\r\nid: 7-1\r\n\r\n: heartbeat\n\n", "event: end\ndata: null\n\n", "event: cut\ndata: 1"]))) out.push(p);
    expect(out).toEqual([
      { event: "custom", data: { a: 1 }, id: "7-1" },
      { event: "end", data: null, id: "7-1" },
    ]);
  });
});

describe("the run's error frame after the model-error answer", () => {
  it("is recognised, so the answer's Retry is the only one", () => {
    const fallback = { type: "ai", content: "The model server is not reachable", additional_kwargs: { deerflow_error_fallback: true } };
    expect(endsInErrorAnswer([{ type: "human", content: "hi" }, fallback])).toBe(true);
    expect(endsInErrorAnswer([fallback, { type: "human", content: "again" }])).toBe(false);
    expect(endsInErrorAnswer([{ type: "human", content: "hi" }, { type: "ai", content: "fine" }])).toBe(false);
  });
});
