/**
 * Custom agents across real `deerflow serve` processes with
 * `agent_storage.backend: db` on one PostgreSQL database and separate data
 * dirs (two hosts): concurrent creates of one name through both processes
 * give exactly one 201 and the 409 the route answers for a taken name, and
 * an agent created and edited through one process runs with its current
 * soul on the other.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { FreshDatabase, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { humanInput } from "../scale-out/helpers/runs-api";
import { scaleOutConfigYaml, startServe } from "../scale-out/helpers/serve-process";
import type { ServeProcess } from "../scale-out/helpers/serve-process";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe.skipIf(!PG)("custom agents shared by two deerflow serve processes (agent_storage.backend: db)", { timeout: 180_000 }, () => {
  let db: FreshDatabase;
  let llm: ScriptedLLMServer;
  let root: string;
  let a: ServeProcess;
  let b: ServeProcess;

  beforeAll(async () => {
    db = await freshPostgresDatabase(PG!, "agentsproc");
    llm = await startScriptedLLMServer({ script: ["Aye."], onExhausted: "repeat-last" });
    root = fs.mkdtempSync(path.join(os.tmpdir(), "deerflow-agents-proc-"));
    const configPath = path.join(root, "config.yaml");
    fs.writeFileSync(configPath, `${scaleOutConfigYaml({ llmUrl: `${llm.url}/v1`, postgresUrl: db.url })}agents_api:\n  enabled: true\nagent_storage:\n  backend: db\n`);
    [a, b] = await Promise.all([
      startServe({ name: "A", configPath, dataDir: path.join(root, "data-a") }),
      startServe({ name: "B", configPath, dataDir: path.join(root, "data-b") }),
    ]);
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    for (const p of [a, b]) if (p) console.error(`--- ${p.name} (pid ${p.pid}) output:\n${p.output.slice(-4000)}`);
  });

  afterAll(async () => {
    for (const p of [a, b]) await p?.stop();
    await llm?.close();
    await db?.drop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("concurrent creates of one name through both processes: one 201, the rest 409", async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(`${(i % 2 ? b : a).api}/agents`, { name: "Racer", soul: `soul ${i}` }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }))),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual(Array(9).fill(409));
    for (const r of refused) expect(r.body).toEqual({ detail: "Agent 'racer' already exists" });
    const winner = answers.find((r) => r.status === 201)!.body;
    expect(await (await fetch(`${a.api}/agents/racer`)).json()).toEqual(winner);
    expect(await (await fetch(`${b.api}/agents/racer`)).json()).toEqual(winner);
  });

  it("an agent created and edited through A runs with its current soul on B", async () => {
    expect((await post(`${a.api}/agents`, { name: "pirate", soul: "You are a pirate." })).status).toBe(201);
    const thread = (await (await post(`${b.api}/threads`, {})).json()) as { thread_id: string };
    const first = llm.requests.length;
    const run = await post(`${b.api}/threads/${thread.thread_id}/runs/wait`, { input: humanInput("ahoy"), context: { agent_name: "pirate" } });
    expect(run.status).toBe(200);
    expect(JSON.stringify(llm.requests[first]!.body)).toContain("You are a pirate.");
    const put = await fetch(`${a.api}/agents/pirate`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ soul: "You are a parrot." }) });
    expect(put.status).toBe(200);
    const second = llm.requests.length;
    expect((await post(`${b.api}/threads/${thread.thread_id}/runs/wait`, { input: humanInput("again"), context: { agent_name: "pirate" } })).status).toBe(200);
    const body = JSON.stringify(llm.requests[second]!.body);
    expect(body).toContain("You are a parrot.");
    expect(body).not.toContain("You are a pirate.");
  });
});
