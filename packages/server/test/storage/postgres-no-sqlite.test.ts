/**
 * A gateway on `database.backend: postgres` with sign-in on writes no SQLite
 * file: accounts, the session's user, threads, runs, checkpoints and the
 * memory index all land in PostgreSQL (queried here), and so do a custom
 * agent (`agent_storage.backend: db`) and the user's state of a custom skill,
 * while the data dir only holds plain files (memory.json, thread files).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appConfigFromText, DeerFlowRuntime } from "@deerflow-ts/harness";
import { freshPostgresDatabase, startScriptedLLMServer } from "@deerflow-ts/harness/testing";
import type { FreshDatabase, RecordedLLMRequest } from "@deerflow-ts/harness/testing";
import { PgUserStore } from "../../src/auth";
import { startServer } from "../../src/gateway";
import { ADMIN_PASSWORD, initializeAdmin, signIn, TEST_JWT_SECRET } from "../helpers/auth-session";
import { humanInput } from "../helpers/test-gateway";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;
const isUpdater = (r: RecordedLLMRequest) => JSON.stringify(r.body ?? {}).includes("long-term memory of an assistant");
const UPDATE = JSON.stringify({
  user: {},
  history: {},
  newFacts: [{ content: "User deploys with Nomad, not Kubernetes", category: "preference", confidence: 0.93, scope: "user", durability: "durable", authority: "descriptive" }],
  threadSummary: "Talked about deploying services with Nomad",
});

/** Every file under `dir` (relative paths). */
const filesUnder = (dir: string) => (fs.readdirSync(dir, { recursive: true }) as string[]).map(String);

describe.skipIf(!SERVER)("gateway on database.backend: postgres (sign-in on)", () => {
  let fresh: FreshDatabase;
  let dataDir: string;
  let client: pg.Client;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "nosqlite");
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "pg-no-sqlite-"));
    client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
  });
  afterAll(async () => {
    while (cleanups.length) await cleanups.pop()!();
    await client?.end();
    await fresh?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("a signed-in user's run and the memory it writes are in PostgreSQL, and no *.db file exists under the data dir", async () => {
    const llm = await startScriptedLLMServer({ script: [(rec) => (isUpdater(rec) ? { text: UPDATE } : { text: "Understood." })], onExhausted: "repeat-last" });
    cleanups.push(() => llm.close());
    process.env.DEERFLOW_TEST_NO_SQLITE_URL = fresh.url;
    cleanups.push(async () => void delete process.env.DEERFLOW_TEST_NO_SQLITE_URL);
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
        "sandbox:",
        "  use: local",
        "memory:",
        "  debounce_seconds: 0.05",
        "database:",
        "  backend: postgres",
        "  postgres_url: $DEERFLOW_TEST_NO_SQLITE_URL",
        "auth:",
        "  enabled: true",
        `  jwt_secret: ${TEST_JWT_SECRET}`,
        "agents_api:",
        "  enabled: true",
        "agent_storage:",
        "  backend: db",
        "",
      ].join("\n"),
    );
    const runtime = await DeerFlowRuntime.open({ config, dataDir, log: () => undefined });
    const { gateway, url } = await startServer({ runtime, port: 0, quiet: true, webDistDir: null, log: () => undefined });
    cleanups.push(async () => {
      await gateway.close();
      await runtime.close();
    });
    expect(gateway.auth.users()).toBeInstanceOf(PgUserStore);
    const api = `${url}/api`;

    await initializeAdmin(api, "owner@example.com");
    const owner = await signIn(api, "owner@example.com", ADMIN_PASSWORD);
    const me = await owner.json<{ id: string; email: string }>("GET", "/v1/auth/me");
    expect(me.email).toBe("owner@example.com");
    // the user's own skill (a custom skill is written by install; a file is enough here), before any run lists skills
    const skillDir = path.join(dataDir, "users", me.id, "skills", "custom", "deploy-notes");
    fs.mkdirSync(skillDir, { recursive: true });
    fs.writeFileSync(path.join(skillDir, "SKILL.md"), "---\nname: deploy-notes\ndescription: Notes on deploys\n---\n# Notes\n");
    await owner.json("POST", "/threads", { thread_id: "pg-thread" });
    const done = await owner.json<{ messages?: unknown[] }>("POST", "/threads/pg-thread/runs/wait", { input: humanInput("We deploy with Nomad, I prefer it over Kubernetes") });
    expect(JSON.stringify(done)).toContain("Understood.");
    await runtime.extensions.memory!.flush();
    const memory = await owner.json<{ facts: Array<{ content: string }> }>("GET", "/memory");
    expect(memory.facts.map((f) => f.content)).toEqual(["User deploys with Nomad, not Kubernetes"]);
    const recall = await owner.json<{ text: string }>("POST", "/memory/recall", { query: "How do we deploy, Nomad?" });
    expect(recall.text).toContain("Nomad");
    // a custom agent and a custom skill's state
    await owner.json("POST", "/agents", { name: "Planner", description: "Plans deploys", soul: "You plan." }, 201);
    expect(await owner.json("GET", "/agents/planner")).toMatchObject({ name: "planner", soul: "You plan." });
    expect(await owner.json("PUT", "/skills/deploy-notes", { enabled: false })).toMatchObject({ name: "deploy-notes", enabled: false });

    // the data is in PostgreSQL
    const users = await client.query("SELECT email, system_role FROM auth_users");
    expect(users.rows).toEqual([{ email: "owner@example.com", system_role: "admin" }]);
    const facts = await client.query("SELECT scope, content FROM memory_facts");
    expect(facts.rows).toEqual([{ scope: me.id, content: "User deploys with Nomad, not Kubernetes" }]);
    const summaries = await client.query("SELECT scope, thread_id FROM memory_thread_summaries");
    expect(summaries.rows).toEqual([{ scope: me.id, thread_id: "pg-thread" }]);
    const agents = await client.query("SELECT user_id, name, soul FROM deerflow_agents");
    expect(agents.rows).toEqual([{ user_id: me.id, name: "planner", soul: "You plan." }]);
    const states = await client.query("SELECT user_id, skill_name, enabled FROM deerflow_skill_states");
    expect(states.rows).toEqual([{ user_id: me.id, skill_name: "deploy-notes", enabled: false }]);
    const migrated = await client.query("SELECT DISTINCT component FROM deerflow_migrations ORDER BY component");
    expect(migrated.rows.map((r) => r.component)).toEqual(expect.arrayContaining(["agents", "auth", "memory", "skill_states"]));
    const tables = await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
    const names = tables.rows.map((r) => r.table_name as string);
    // threads and runs went to the storage tables of the same database (whatever their names)
    expect(names.some((n) => /thread/.test(n))).toBe(true);
    expect(names.some((n) => /run/.test(n))).toBe(true);

    await gateway.close();
    await runtime.close();
    cleanups.pop();
    const sqliteFiles = filesUnder(dataDir).filter((f) => /\.db(-wal|-shm|-journal)?$/.test(f));
    expect(sqliteFiles).toEqual([]);
    // memory.json (plain file) is where the facts' document lives
    expect(filesUnder(dataDir).some((f) => f.endsWith("memory.json"))).toBe(true);
    // the agent and the skill state are rows, not files
    expect(filesUnder(dataDir).filter((f) => f.endsWith("config.yaml") || f.endsWith("SOUL.md") || f.endsWith("_skill_states.json"))).toEqual([]);
  });
});
