import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, SqliteCheckpointStore, threadStateSchema, tool } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import { parseSse } from "../helpers/test-gateway";

/**
 * How a run's frames are grouped into the writes of its SSE response (one body chunk per write on the Web-stream
 * path), with a tool that has side effects: the run waits for its checkpoint to be durable (a real SQLite commit)
 * before the tool runs and before it ends.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gatewayWith(execute: () => string | Promise<string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-stream-writes-"));
  const checkpointer = new SqliteCheckpointStore(path.join(dataDir, "deerflow.db"));
  const lookup = tool({ name: "lookup", description: "Look something up", schema: z.object({ q: z.string() }), execute });
  const model = new ScriptedModel([{ text: "Let me look that up.", toolCalls: [{ name: "lookup", args: { q: "x" } }] }, "The answer."]);
  const agent = createAgent({ model, tools: [lookup], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" });
  const gateway = await createGateway({ dataDir, database: checkpointer.db, checkpointer, webDistDir: null, log: () => undefined, agentFactory: () => agent });
  cleanups.push(async () => {
    await gateway.close();
    await checkpointer.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const created = await gateway.app.request("/api/threads", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  const { thread_id: tid } = (await created.json()) as { thread_id: string };
  const res = await gateway.app.request(`/api/threads/${tid}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ input: { messages: [{ type: "human", content: "go" }] }, stream_mode: ["values", "messages-tuple", "updates"] }),
  });
  expect(res.status).toBe(200);
  return res.body!.getReader();
}

/** A chunk's frames as `event` or `event:node` for updates / `values:N messages`. */
function describeChunk(text: string): string[] {
  return parseSse(text)
    .filter((f) => f.event)
    .map((f) => {
      if (f.event === "updates") return `updates:${Object.keys(JSON.parse(f.data!) as object)[0]}`;
      if (f.event === "values") return `values:${(JSON.parse(f.data!) as { messages: unknown[] }).messages.length}`;
      return f.event!;
    });
}

async function readChunks(reader: ReadableStreamDefaultReader<Uint8Array>, onChunk?: (frames: string[]) => void): Promise<string[][]> {
  const decoder = new TextDecoder();
  const chunks: string[][] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return chunks;
    const frames = describeChunk(decoder.decode(value));
    if (!frames.length) continue; // a heartbeat
    chunks.push(frames);
    onChunk?.(frames);
  }
}

describe("a run's frames per write (tool with side effects, SQLite)", () => {
  it("the model step and the tool step that waited for its checkpoint share a write; so do the last step and end", async () => {
    const chunks = await readChunks(await gatewayWith(() => "found"));
    const all = chunks.flat();
    expect(all[0]).toBe("metadata");
    expect(all.at(-1)).toBe("end");
    // The model's tool call (its step's `values` has 2 messages) and the tool's step that ran after the commit.
    const toolStep = chunks.find((c) => c.includes("updates:tools"))!;
    expect(toolStep).toContain("updates:model");
    expect(toolStep).toContain("values:2");
    expect(toolStep).toContain("values:3");
    // The final answer and the end, after the run's last commit.
    expect(chunks.at(-1)).toEqual(expect.arrayContaining(["updates:model", "values:4", "end"]));
  });

  it("frames are held for the commit only, not for the tool: the model step reaches the client while the tool still runs", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let toolStarted = false;
    const reader = await gatewayWith(async () => {
      toolStarted = true;
      await gate;
      return "found";
    });
    let sawModelStep = false;
    const bound = setTimeout(open, 10_000); // a failure bound, not a synchronisation: the assertion below then fails
    const chunks = await readChunks(reader, (frames) => {
      if (frames.includes("values:2") && !sawModelStep) {
        sawModelStep = true;
        expect(toolStarted).toBe(true);
        open();
      }
    });
    clearTimeout(bound);
    expect(sawModelStep).toBe(true);
    const modelStep = chunks.findIndex((c) => c.includes("values:2"));
    const toolStep = chunks.findIndex((c) => c.includes("updates:tools"));
    expect(toolStep).toBeGreaterThan(modelStep);
  });
});
