/**
 * A cancel of a run that finished is refused with 409, as DeerFlow does
 * ("Run X is not cancellable (status: success)"), whichever process it
 * reaches and however soon after the run's `end` event it comes: the client
 * waits for `end` on the stream, then cancels at once.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, createAgent, DeerFlowRuntime, threadStateSchema } from "@deerflow-ts/harness";
import { freshPostgresDatabase, ScriptedModel } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, parseSse, postJson, startTestGateway } from "../helpers/test-gateway";
import type { TestGateway } from "../helpers/test-gateway";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;
const ROUNDS = Number(process.env.CANCEL_END_ROUNDS ?? 12);

/**
 * Reads an SSE response until its `end` frame arrived and returns its event names; the connection may
 * still be open (a client acts on `end` itself, as the SDK does, not on the close).
 */
async function eventsToEnd(res: Response): Promise<string[]> {
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (value) text += decoder.decode(value, { stream: true });
    const events = parseSse(text.slice(0, text.lastIndexOf("\n\n") + 2)).map((f) => f.event ?? "");
    if (events.at(-1) === "end" || done) {
      void reader.cancel().catch(() => undefined);
      return events;
    }
  }
}

/** Every cancel variant of a finished run: answered 409 with DeerFlow's message. */
async function expectNotCancellable(base: string, threadId: string, runId: string): Promise<void> {
  for (const query of ["wait=1&action=interrupt", "wait=0&action=interrupt", "wait=1&action=rollback"]) {
    const res = await fetch(`${base}/api/threads/${threadId}/runs/${runId}/cancel?${query}`, { method: "POST" });
    const body = await res.text();
    expect({ query, status: res.status }).toEqual({ query, status: 409 });
    expect(body).toContain(`Run ${runId} is not cancellable (status: success)`);
  }
}

describe("cancel of a finished run (one process)", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ steps: ["done"], modelOptions: { onExhausted: "repeat-last" } });
  });
  afterAll(async () => gw?.close());

  it(`is 409 right after the end event, ${ROUNDS} runs in a row`, async () => {
    const tid = ((await (await postJson(`${gw.url}/api/threads`, {})).json()) as { thread_id: string }).thread_id;
    for (let i = 0; i < ROUNDS; i++) {
      const res = await postJson(`${gw.url}/api/threads/${tid}/runs/stream`, { input: humanInput(`q${i}`), stream_mode: ["values"] });
      const runId = /\/runs\/([^/?]+)/.exec(res.headers.get("content-location") ?? "")?.[1];
      expect(runId).toBeTruthy();
      expect((await eventsToEnd(res)).at(-1)).toBe("end");
      await expectNotCancellable(gw.url, tid, runId!);
    }
  });
});

describe.skipIf(!PG || !REDIS)("cancel of a finished run (two processes on PostgreSQL + Redis)", () => {
  let fresh: FreshDatabase;
  const servers: string[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(PG!, "cancelend");
    process.env.DEERFLOW_TEST_CANCEL_END_PG_URL = fresh.url;
    process.env.DEERFLOW_TEST_CANCEL_END_REDIS_URL = REDIS;
    const { config } = appConfigFromText(
      ["sandbox:", "  use: local", "title:", "  enabled: false", "database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_CANCEL_END_PG_URL", "stream_bridge:", "  type: redis", "  redis_url: $DEERFLOW_TEST_CANCEL_END_REDIS_URL", ""].join("\n"),
    );
    const model = new ScriptedModel(["done"], { onExhausted: "repeat-last" });
    for (let i = 0; i < 2; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cancel-end-"));
      const runtime = await DeerFlowRuntime.open({
        config,
        dataDir,
        log: () => undefined,
        agentFactory: ({ checkpointer }) => createAgent({ model, tools: [], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
      });
      expect(runtime.runs.shared).toBe(true);
      const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
      cleanups.push(async () => {
        await gateway.close();
        await runtime.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      });
      servers.push(url);
    }
  });
  afterAll(async () => {
    while (cleanups.length) await cleanups.pop()!();
    await fresh?.drop();
  });

  it(`is 409 on the other process right after the end event it streamed, ${ROUNDS} runs in a row`, async () => {
    const [a, b] = servers;
    const tid = `cancel-end-${Date.now()}`;
    expect((await postJson(`${a}/api/threads`, { thread_id: tid })).status).toBe(200);
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate: streamed by the executing process, or joined from the other one; the cancel goes to the other.
      const created = await postJson(`${a}/api/threads/${tid}/runs`, { input: humanInput(`q${i}`), stream_mode: ["values"] });
      expect(created.status).toBe(200);
      const runId = ((await created.json()) as { run_id: string }).run_id;
      const streamer = i % 2 === 0 ? a : b;
      const events = await eventsToEnd(await fetch(`${streamer}/api/threads/${tid}/runs/${runId}/stream`, { headers: { "Last-Event-ID": "-1" } }));
      expect(events.at(-1)).toBe("end");
      await expectNotCancellable(i % 2 === 0 ? b : a, tid, runId);
    }
  });
});
