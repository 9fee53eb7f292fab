/**
 * `agent_storage.backend: db`: the agents routes, the agent tools and the
 * lead agent read and write rows in the database instead of files — on the
 * gateway's SQLite file and on PostgreSQL — and two gateways on one
 * PostgreSQL database (separate data dirs, as on two hosts) share agents:
 * one's create is the other's list, of concurrent creates of one name
 * exactly one answers 201 and the others the usual 409, and an edit on one
 * shows on the other's next run.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { freshPostgresDatabase, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { FreshDatabase, HttpScriptStep, ScriptedLLMServer } from "@deerflow-ts/harness/testing";
import { startServer } from "../../src/gateway";
import { humanInput, postJson } from "../helpers/test-gateway";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function gateway(llm: ScriptedLLMServer, database: string[]): Promise<{ url: string; dataDir: string; runtime: DeerFlowRuntime }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "agents-db-"));
  const { config } = appConfigFromText(
    [
      "models:",
      "  - name: basic",
      "    use: openai-compatible",
      "    model: scripted",
      `    base_url: ${llm.url}/v1`,
      "    api_key: k",
      "title:",
      "  enabled: false",
      "agents_api:",
      "  enabled: true",
      "sandbox:",
      "  use: local",
      "agent_storage:",
      "  backend: db",
      ...database,
    ].join("\n"),
  );
  const runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
  const { gateway: gw, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
  cleanups.push(async () => {
    await gw.close();
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { url, dataDir, runtime };
}

async function scripted(script: HttpScriptStep[]): Promise<ScriptedLLMServer> {
  const llm = await startScriptedLLMServer({ script, onExhausted: "repeat-last" });
  cleanups.push(() => llm.close());
  return llm;
}

const systemPrompt = (llm: ScriptedLLMServer, i: number): string => {
  const msgs = (llm.requests[i]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  return msgs.filter((m) => m.role === "system").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
};

async function run(url: string, threadId: string, text: string, context: Record<string, unknown>) {
  const res = await postJson(`${url}/api/threads/${threadId}/runs/wait`, { input: humanInput(text), context });
  expect(res.status).toBe(200);
  return (await res.json()) as { messages: Array<{ type: string; content: unknown }> };
}

const put = (url: string, body: unknown) => fetch(url, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Bootstrap with setup_agent, chat, update_agent, chat, then PUT and DELETE over HTTP: all through the database store. */
async function lifecycle(url: string, llm: ScriptedLLMServer): Promise<void> {
  await postJson(`${url}/api/threads`, { thread_id: "boot" });
  const boot = await run(url, "boot", "Create an agent named terse", { is_bootstrap: true, agent_name: "terse" });
  expect(boot.messages.find((m) => m.type === "tool")?.content).toBe("Agent 'terse' created successfully!");
  expect(await (await fetch(`${url}/api/agents/terse`)).json()).toMatchObject({ name: "terse", description: "A terse helper", soul: "You are Terse." });
  await postJson(`${url}/api/threads`, { thread_id: "chat" });
  const upd = await run(url, "chat", "be terser", { agent_name: "terse" });
  expect(systemPrompt(llm, 2)).toContain("You are Terse.");
  expect(String(upd.messages.filter((m) => m.type === "tool").at(-1)?.content)).toMatch(/^Agent 'terse' updated successfully\. Changed: description, soul\./);
  await run(url, "chat", "again", { agent_name: "terse" });
  expect(systemPrompt(llm, 4)).toContain("You are Terse v2.");
  expect((await put(`${url}/api/agents/terse`, { soul: "You are Terse v3." })).status).toBe(200);
  await run(url, "chat", "and again", { agent_name: "terse" });
  expect(systemPrompt(llm, 5)).toContain("You are Terse v3.");
  const listed = (await (await fetch(`${url}/api/agents`)).json()) as { agents: Array<{ name: string }> };
  expect(listed.agents.find((a) => a.name === "terse")).toMatchObject({ name: "terse", description: "Terser", soul: "You are Terse v3." });
  expect((await postJson(`${url}/api/agents`, { name: "TERSE", soul: "x" })).status).toBe(409);
  expect((await fetch(`${url}/api/agents/terse`, { method: "DELETE" })).status).toBe(204);
  expect((await fetch(`${url}/api/agents/terse`)).status).toBe(404);
}

const LIFECYCLE_SCRIPT: HttpScriptStep[] = [
  { toolCalls: [{ name: "setup_agent", args: { soul: "You are Terse.", description: "A terse helper" } }] },
  "Your agent terse is ready.",
  { toolCalls: [{ name: "update_agent", args: { soul: "You are Terse v2.", description: "Terser" } }] },
  "Updated myself.",
  "Done.",
];

describe("agent_storage.backend: db on SQLite", () => {
  it("setup_agent, update_agent, the lead agent and the routes use rows in gateway.db, and no agent files are written", async () => {
    const llm = await scripted(LIFECYCLE_SCRIPT);
    const { url, dataDir } = await gateway(llm, []);
    expect((await postJson(`${url}/api/agents`, { name: "Keeper", description: "kept", soul: "I stay." })).status).toBe(201);
    await lifecycle(url, llm);
    const db = new Database(path.join(dataDir, "gateway.db"), { readonly: true });
    const rows = db.prepare("SELECT user_id, name, soul FROM agents ORDER BY name").all();
    db.close();
    expect(rows).toEqual([{ user_id: "default", name: "keeper", soul: "I stay." }]);
    expect(fs.existsSync(path.join(dataDir, "users", "default", "agents", "keeper", "config.yaml"))).toBe(false);
  });
});

describe("agent_storage.backend: db on database.backend: memory", () => {
  it("is refused at start, naming both keys", async () => {
    const { config } = appConfigFromText(["agent_storage:", "  backend: db", "database:", "  backend: memory"].join("\n"));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "agents-db-mem-"));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    await expect(DeerFlowRuntime.open({ config, dataDir, log: () => undefined })).rejects.toThrow(/agent_storage\.backend.*database\.backend/);
  });
});

describe.skipIf(!SERVER)("agent_storage.backend: db on PostgreSQL", () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "agentsdb");
    process.env.DEERFLOW_TEST_AGENTS_DB_URL = fresh.url;
  });
  afterAll(async () => {
    delete process.env.DEERFLOW_TEST_AGENTS_DB_URL;
    await fresh?.drop();
  });
  const pgLines = ["database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_AGENTS_DB_URL", "  postgres_schema: agents_life"];

  it("runs the whole lifecycle through deerflow_agents", async () => {
    const llm = await scripted(LIFECYCLE_SCRIPT);
    const { url } = await gateway(llm, pgLines);
    await lifecycle(url, llm);
  });

  it("two gateways share agents: a create on A lists on B, concurrent creates give one 201 and 409s, an edit on A shows on B's next run", async () => {
    const llm = await scripted(["ok"]);
    const shared = ["database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_AGENTS_DB_URL", "  postgres_schema: agents_two"];
    const a = await gateway(llm, shared);
    const b = await gateway(llm, shared);
    expect((await postJson(`${a.url}/api/agents`, { name: "Poet", description: "rhymes", soul: "Speak in rhyme." })).status).toBe(201);
    expect(await (await fetch(`${b.url}/api/agents`)).json()).toMatchObject({ agents: [{ name: "poet", description: "rhymes", soul: "Speak in rhyme." }] });
    expect(await (await fetch(`${b.url}/api/agents/check?name=poet`)).json()).toEqual({ available: false, name: "poet" });

    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => postJson(`${(i % 2 ? b : a).url}/api/agents`, { name: "Racer", soul: `soul ${i}` }).then(async (r) => ({ status: r.status, body: await r.json() }))),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => r.status)).toEqual(Array(5).fill(409));
    expect(refused[0]!.body).toEqual({ detail: "Agent 'racer' already exists" });

    await postJson(`${b.url}/api/threads`, { thread_id: "poem" });
    await run(b.url, "poem", "hi", { agent_name: "poet" });
    expect(systemPrompt(llm, 0)).toContain("Speak in rhyme.");
    expect((await put(`${a.url}/api/agents/poet`, { soul: "Speak in haiku." })).status).toBe(200);
    await run(b.url, "poem", "hi again", { agent_name: "poet" });
    expect(systemPrompt(llm, 1)).toContain("Speak in haiku.");
    expect((await fetch(`${b.url}/api/agents/poet`, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(`${a.url}/api/agents/poet`)).status).toBe(404);
  });
});
