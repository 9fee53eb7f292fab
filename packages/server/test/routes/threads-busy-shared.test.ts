/**
 * On shared backends (PostgreSQL + Redis, several processes) a thread whose
 * run executes in another process is busy on this one too: deleting it or
 * writing its state is refused with 409 until that run ended, as it is for a
 * run executing here.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, createAgent, DeerFlowRuntime, threadStateSchema, tool } from "@deerflow-ts/harness";
import { freshPostgresDatabase, ScriptedModel } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

describe.skipIf(!PG || !REDIS)("thread busy checks across two gateways on PostgreSQL + Redis", () => {
  let fresh: FreshDatabase;
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(PG!, "busy");
  });
  afterAll(async () => {
    while (cleanups.length) await cleanups.pop()!();
    await fresh?.drop();
  });

  it("B refuses to delete or write the state of a thread whose run executes on A, and deletes it once the run ended", async () => {
    process.env.DEERFLOW_TEST_BUSY_PG_URL = fresh.url;
    process.env.DEERFLOW_TEST_BUSY_REDIS_URL = REDIS;
    const { config } = appConfigFromText(
      ["sandbox:", "  use: local", "title:", "  enabled: false", "database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_BUSY_PG_URL", "stream_bridge:", "  type: redis", "  redis_url: $DEERFLOW_TEST_BUSY_REDIS_URL", ""].join("\n"),
    );
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let opened!: () => void;
    const opens = new Promise<void>((r) => (opened = r));
    const gate = tool({
      name: "gate",
      description: "Wait for the test",
      schema: z.object({}),
      execute: async () => {
        entered();
        await opens;
        return "opened";
      },
    });
    const model = new ScriptedModel([{ text: "waiting", toolCalls: [{ name: "gate", args: {} }] }, "done"]);
    const servers: string[] = [];
    const runtimes: DeerFlowRuntime[] = [];
    for (let i = 0; i < 2; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "busy-shared-"));
      const runtime = await DeerFlowRuntime.open({
        config,
        dataDir,
        log: () => undefined,
        agentFactory: ({ checkpointer }) => createAgent({ model, tools: [gate], checkpointer, stateSchema: threadStateSchema, name: "lead_agent" }),
      });
      const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
      cleanups.push(async () => {
        await gateway.close();
        await runtime.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      });
      servers.push(url);
      runtimes.push(runtime);
    }
    const [a, b] = servers;
    expect(runtimes.every((r) => r.runs.shared)).toBe(true);
    const threadId = `busy-${Date.now()}`;
    expect((await postJson(`${a}/api/threads`, { thread_id: threadId })).status).toBe(200);
    const started = await postJson(`${a}/api/threads/${threadId}/runs`, { assistant_id: "lead_agent", input: humanInput("one") });
    expect(started.status).toBe(200);
    const { run_id: runId } = (await started.json()) as { run_id: string };
    await inside;

    // B executes nothing of the thread; the run lock says A's run holds it.
    expect(runtimes[1].runs.hasWorkInFlight(threadId)).toBe(false);
    const del = await fetch(`${b}/api/threads/${threadId}`, { method: "DELETE" });
    expect(del.status).toBe(409);
    expect(((await del.json()) as { detail: string }).detail).toMatch(/work in flight/);
    expect((await postJson(`${b}/api/threads/${threadId}/state`, { values: {} })).status).toBe(409);

    opened();
    expect((await runtimes[0].runs.wait(runId))?.status).toBe("success");
    const after = await fetch(`${b}/api/threads/${threadId}`, { method: "DELETE" });
    expect(after.status).toBe(200);
    expect((await fetch(`${a}/api/threads/${threadId}`)).status).toBe(404);
  });
});
