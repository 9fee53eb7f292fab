/**
 * A `deerflow serve` process killed with -9 while it executes a run and
 * holds two more queued behind it on the same thread: the survivor resumes
 * the running one, then starts the queued one (exactly once, from the
 * input its record kept), and ends the queued one whose request carried
 * secrets with why instead of running it without them. Real processes on
 * one PostgreSQL database and one Redis; waits are for events and statuses.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { FreshDatabase, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { createRun, createThread, getRun, joinRun, runIdOf, streamRun, threadMessages, waitForRun } from "./helpers/runs-api";
import { scaleOutConfigYaml, startServe } from "./helpers/serve-process";
import type { ServeProcess } from "./helpers/serve-process";
import { requestShape, scriptedRouter } from "./helpers/scripted-router";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

const text = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content));
const ended = (s: string) => s !== "pending" && s !== "running";

describe.skipIf(!PG || !REDIS)("a killed process's queued runs are started (or ended with why) by the survivor", { timeout: 180_000 }, () => {
  let db: FreshDatabase;
  let llm: ScriptedLLMServer;
  let root: string;
  let victim: ServeProcess;
  let survivor: ServeProcess;

  beforeAll(async () => {
    db = await freshPostgresDatabase(PG!, "deadqueue");
    llm = await startScriptedLLMServer({ script: [scriptedRouter().step], onExhausted: "repeat-last" });
    root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-deadqueue-"));
    const configPath = path.join(root, "config.yaml");
    fs.writeFileSync(configPath, scaleOutConfigYaml({ llmUrl: `${llm.url}/v1`, postgresUrl: db.url, redisUrl: REDIS!, leaseSeconds: 3, graceSeconds: 1 }));
    const dataDir = path.join(root, "data");
    [victim, survivor] = await Promise.all([startServe({ name: "V", configPath, dataDir }), startServe({ name: "S", configPath, dataDir })]);
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    for (const p of [victim, survivor]) if (p) console.error(`--- ${p.name} (pid ${p.pid}) output:\n${p.output.slice(-4000)}`);
  });

  afterAll(async () => {
    for (const p of [victim, survivor]) await p?.stop();
    await llm?.close();
    await db?.drop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("kill -9 with a running and two queued runs: resumed, then the queued one runs once; the one with secrets ends secrets_not_resumable", async () => {
    const tid = await createThread(victim.api);
    const running = await streamRun(victim.api, tid, "[crash dq] the running one");
    const runId = await runIdOf(running);
    // its tool step committed, then the victim hangs in its second model call
    await running.waitFor((f) => f.event === "values" && JSON.stringify(f.data).includes('"type":"tool"'), 30_000);
    // two runs queued on the victim itself, behind it: one plain, one whose request carries a secret
    const queued = await createRun(victim.api, tid, "queued on the victim", { multitask_strategy: "enqueue" });
    const withSecret = await createRun(victim.api, tid, "queued with a secret", { multitask_strategy: "enqueue", context: { secrets: { API_TOKEN: "dq-secret-value" } } });
    expect([queued.status, withSecret.status]).toEqual(["pending", "pending"]);
    const secretTail = await joinRun(survivor.api, tid, withSecret.run_id);

    await victim.kill9();
    await running.done;

    // The survivor takes all three over: the running run is resumed first, the plain queued one runs after it.
    expect(await waitForRun(survivor.api, tid, runId, ended)).toBe("success");
    expect(await waitForRun(survivor.api, tid, queued.run_id, ended)).toBe("success");
    expect(await waitForRun(survivor.api, tid, withSecret.run_id, ended)).toBe("error");
    expect(survivor.output).toMatch(new RegExp(`taking over run ${queued.run_id}`));

    const messages = (await threadMessages(survivor.api, tid)).map((m) => `${m.type}:${text(m.content)}`);
    expect(messages.map((m) => m.slice(0, m.indexOf(":")))).toEqual(["human", "ai", "tool", "ai", "human", "ai"]);
    expect(messages[3]).toBe("ai:resumed dq");
    expect(messages[4]).toContain("queued on the victim");
    expect(messages[5]).toMatch(/^ai:answer: [\s\S]*queued on the victim/);
    // exactly once: one model request for the queued run's input, and its message once in the thread
    expect(llm.requests.filter((r) => requestShape(r).human.includes("queued on the victim"))).toHaveLength(1);
    expect(messages.filter((m) => m.includes("queued on the victim") && m.startsWith("human:"))).toHaveLength(1);
    // the run with a secret never reached the model, and says why
    expect(llm.requests.some((r) => requestShape(r).human.includes("queued with a secret"))).toBe(false);
    const rec = await getRun(survivor.api, tid, withSecret.run_id);
    expect(rec.error).toMatch(/its request carried secrets \(API_TOKEN\), which are never stored; send the request again/);
    const frames = await secretTail.done;
    const error = frames.find((f) => f.event === "error");
    expect(error?.data).toMatchObject({ name: "RunResumeError", code: "secrets_not_resumable" });
    expect(frames.at(-1)?.event).toBe("end");
    expect(JSON.stringify(frames)).not.toContain("dq-secret-value");
  });
});
