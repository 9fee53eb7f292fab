import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { createAgent, MemoryCheckpointStore, threadStateSchema, tool } from "@deerflow-ts/harness";
import type { CheckpointStore } from "@deerflow-ts/harness";
import { ScriptedModel } from "@deerflow-ts/harness/testing";
import type { ScriptStep, ScriptedModelOptions } from "@deerflow-ts/harness/testing";
import { createGateway } from "../../src/gateway";
import type { Gateway } from "../../src/gateway";
import type { GatewayOptions } from "../../src/options";

/** A tool that emits a custom event and echoes its text. */
export const echoTool = tool({
  name: "echo",
  description: "Echo the text back",
  schema: z.object({ text: z.string() }),
  execute: ({ text }, rt) => {
    rt.writer({ type: "echo_progress", text });
    return `echo: ${text}`;
  },
});

/** A tool that waits `ms` (honouring cancellation). */
export const sleepTool = tool({
  name: "sleep",
  description: "Wait some milliseconds",
  schema: z.object({ ms: z.number() }),
  execute: async ({ ms }, rt) => {
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      rt.signal.addEventListener("abort", () => {
        clearTimeout(t);
        reject(rt.signal.reason ?? new Error("aborted"));
      });
    });
    return `slept ${ms}`;
  },
});

/** A running in-process gateway backed by ScriptedModel agents. */
export interface TestGateway {
  gateway: Gateway;
  url: string;
  model: ScriptedModel;
  checkpointer: CheckpointStore;
  dataDir: string;
  close(): Promise<void>;
}

/** Options of {@link startTestGateway}. */
export interface TestGatewayOptions extends Partial<GatewayOptions> {
  steps?: ScriptStep[];
  modelOptions?: ScriptedModelOptions;
}

/**
 * Start a gateway on 127.0.0.1:0 whose agent factory builds a real
 * `createAgent` over one shared ScriptedModel and one checkpoint store.
 */
export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gw-test-"));
  const model = new ScriptedModel(opts.steps ?? [], opts.modelOptions);
  const checkpointer = opts.checkpointer ?? new MemoryCheckpointStore();
  const gateway = await createGateway({
    dataDir,
    checkpointer,
    webDistDir: null,
    log: () => undefined,
    ...opts,
    agentFactory:
      opts.agentFactory ??
      (() => createAgent({ model, tools: [echoTool, sleepTool], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" })),
  });
  const url = await gateway.start({ port: 0 });
  return {
    gateway,
    url,
    model,
    checkpointer,
    dataDir,
    async close() {
      await gateway.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One parsed SSE frame. */
export interface SseFrame {
  event?: string;
  data?: string;
  id?: string;
  comment?: string;
}

/** Parse raw SSE text into frames (keeps comments). */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split("\n\n")) {
    if (!block.trim()) continue;
    const f: SseFrame = {};
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) f.comment = line.slice(1).trim();
      else if (line.startsWith("event: ")) f.event = line.slice(7);
      else if (line.startsWith("data: ")) f.data = (f.data === undefined ? "" : f.data + "\n") + line.slice(6);
      else if (line.startsWith("id: ")) f.id = line.slice(4);
    }
    frames.push(f);
  }
  return frames;
}

/** POST JSON and return the response. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

/** A human message in the UI's wire shape. */
export function humanInput(text: string): Record<string, unknown> {
  return { messages: [{ type: "human", content: [{ type: "text", text }], additional_kwargs: {} }] };
}

/** Poll until `fn` returns truthy (or time out). */
export async function until<T>(fn: () => Promise<T> | T, timeoutMs = 5000, stepMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("until: timed out");
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
