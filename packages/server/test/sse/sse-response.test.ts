import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createAgent, createMemoryStreamBridge, MemoryCheckpointStore, threadStateSchema } from "@deerflow-ts/harness";
import type { StreamListener } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import { sendSse, sseResponse } from "../../src/sse/sse-response";
import { parseSse } from "../helpers/test-gateway";

/** One run's stream on an in-memory bridge: publish, close (end), and listen from the oldest event. */
async function runStream(runId: string) {
  const bridge = createMemoryStreamBridge({ queueMaxsize: 256, ttlSeconds: 60 });
  const writer = await bridge.writer(runId);
  return {
    publish: (event: string, data: unknown) => writer.publish(event, data),
    close: () => void writer.end(),
    listen: (push: StreamListener) => bridge.subscribe(runId, null, push),
  };
}

describe("sseResponse (Web-stream path, used without a Node response)", () => {
  it("replays, tails, coalesces same-tick frames into one chunk and ends with end", async () => {
    const buffer = await runStream("r-web");
    buffer.publish("metadata", { run_id: "r-web" });
    const res = sseResponse((push) => buffer.listen(push), { heartbeatMs: 60_000, headers: { "Content-Location": "/x" } });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("content-location")).toBe("/x");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const chunks: string[] = [];
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        chunks.push(decoder.decode(value));
      }
    })();
    await new Promise((r) => setTimeout(r, 10));
    buffer.publish("values", { n: 1 });
    buffer.publish("values", { n: 2 });
    await new Promise((r) => setTimeout(r, 10));
    buffer.close();
    await reading;
    const frames = parseSse(chunks.join(""));
    expect(frames.map((f) => f.event)).toEqual(["metadata", "values", "values", "end"]);
    // the two same-tick frames went out as one chunk
    expect(chunks.some((c) => c.includes('"n":1') && c.includes('"n":2'))).toBe(true);
  });

  it("a cancelled body detaches from the buffer", async () => {
    const buffer = await runStream("r-cancel");
    let detached = false;
    const res = sseResponse(
      (push) => {
        const stop = buffer.listen(push);
        return () => {
          detached = true;
          stop();
        };
      },
      { heartbeatMs: 60_000 },
    );
    await res.body!.cancel();
    expect(detached).toBe(true);
  });

  it("serves a whole run through app.request() (no socket)", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-web-sse-"));
    const checkpointer = new MemoryCheckpointStore();
    const model = new ScriptedModel(["hello from the web path"]);
    const gateway = await createGateway({
      dataDir,
      checkpointer,
      webDistDir: null,
      log: () => undefined,
      agentFactory: () => createAgent({ model, checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
    });
    try {
      const created = await gateway.app.request("/api/threads", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      const { thread_id: tid } = (await created.json()) as { thread_id: string };
      const res = await gateway.app.request(`/api/threads/${tid}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: { messages: [{ type: "human", content: "hi" }] }, stream_mode: ["values"] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-location")).toMatch(new RegExp(`^/api/threads/${tid}/runs/`));
      const frames = parseSse(await res.text());
      expect(frames[0].event).toBe("metadata");
      expect(frames.at(-1)).toEqual({ event: "end", data: "null" });
      const last = JSON.parse(frames.filter((f) => f.event === "values").at(-1)!.data!) as { messages: Array<{ content: string }> };
      expect(last.messages.at(-1)!.content).toBe("hello from the web path");
    } finally {
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("sendSse on a Node response", () => {
  /** A stand-in for the Node response behind a Hono context: records what the stream does to it. */
  function nodeContext() {
    const calls: string[] = [];
    const outgoing = {
      headersSent: false,
      destroyed: false,
      writableEnded: false,
      writableFinished: false,
      writeHead: (status: number) => void calls.push(`writeHead ${status}`),
      write: (text: string) => void calls.push(`write ${text.split("\n")[0]}`),
      flushHeaders: () => void calls.push("flushHeaders"),
      end: () => void calls.push("end"),
      once: () => outgoing,
    };
    return { c: { env: { outgoing } } as never, outgoing, calls };
  }

  it("starts the response on the next turn, replaying what was published meanwhile", async () => {
    const { c, calls } = nodeContext();
    const buffer = await runStream("r-node");
    buffer.publish("metadata", { run_id: "r-node" });
    sendSse(c, (push) => buffer.listen(push), { heartbeatMs: 60_000 });
    expect(calls).toEqual([]); // nothing inside the request
    buffer.publish("values", { messages: [] });
    buffer.close();
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(["writeHead 200", "write event: metadata", "end"]);
  });

  it("a response gone before its turn is reported as a disconnect and never written", async () => {
    const { c, outgoing, calls } = nodeContext();
    const buffer = await runStream("r-gone");
    let disconnected = 0;
    sendSse(c, (push) => buffer.listen(push), { heartbeatMs: 60_000, onDisconnect: () => disconnected++ });
    outgoing.destroyed = true; // the client hung up in the same turn
    await new Promise((r) => setImmediate(r));
    expect(disconnected).toBe(1);
    expect(calls).toEqual([]);
  });
});
