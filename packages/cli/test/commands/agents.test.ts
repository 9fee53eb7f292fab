/**
 * `deerflow agents import` copies file agents into the database store of
 * `agent_storage.backend: db` (SQLite or PostgreSQL), leaving the files in
 * place; a second run (or two at once) imports nothing twice. `agents list`
 * reads the configured store.
 */
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCustomAgent } from "@deerflow-ts/harness/agents";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { cleanEnv, runCli, tempDir } from "../helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;

/** A project dir with config.yaml and three file agents of two users, plus one shared legacy agent. */
function project(database: string[], backend = "db"): { dir: string; dataDir: string } {
  const dir = tempDir("df-agents-");
  const dataDir = path.join(dir, ".deer-flow");
  writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", "agent_storage:", `  backend: ${backend}`, ...database, ""].join("\n"));
  createCustomAgent(dataDir, "default", { name: "poet", description: "Writes poems", skills: ["rhymes"] }, "Speak in rhyme.");
  createCustomAgent(dataDir, "default", { name: "critic" }, "Be harsh.");
  createCustomAgent(dataDir, "alice", { name: "poet", description: "Alice's poet" }, "Haiku only.");
  // a shared legacy agent is not any user's: reported, not imported
  createCustomAgent(path.join(dataDir, "legacy-staging"), "x", { name: "old" }, "old soul");
  const legacy = path.join(dataDir, "agents", "old");
  cpSync(path.join(dataDir, "legacy-staging", "users", "x", "agents", "old"), legacy, { recursive: true });
  rmSync(path.join(dataDir, "legacy-staging"), { recursive: true });
  return { dir, dataDir };
}

const filesUnder = (dir: string) => (readdirSync(dir, { recursive: true }) as string[]).map(String);

async function importTwiceAndList(dir: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const first = await runCli(["agents", "import", "--json"], { cwd: dir, env });
  expect(first.code).toBe(0);
  const outcome = JSON.parse(first.stdout) as { imported: Array<{ userId: string; name: string }>; existing: unknown[]; skipped: Array<{ name: string }> };
  expect(outcome.imported).toEqual([
    { userId: "alice", name: "poet" },
    { userId: "default", name: "critic" },
    { userId: "default", name: "poet" },
  ]);
  expect(outcome.existing).toEqual([]);
  expect(outcome.skipped.map((s) => s.name)).toEqual(["old"]);
  // files stay
  expect(existsSync(path.join(dataDir, "users", "default", "agents", "poet", "config.yaml"))).toBe(true);
  expect(existsSync(path.join(dataDir, "users", "default", "agents", "poet", "SOUL.md"))).toBe(true);

  const again = await runCli(["agents", "import"], { cwd: dir, env });
  expect(again.code).toBe(0);
  expect(again.stdout).toContain("Imported 0 agent(s)");
  expect(again.stdout).toContain("3 already there");

  const list = await runCli(["agents", "list", "--json"], { cwd: dir, env });
  expect(JSON.parse(list.stdout)).toEqual([
    { name: "critic", description: "" },
    { name: "poet", description: "Writes poems" },
  ]);
  const alice = await runCli(["agents", "list", "--user", "alice"], { cwd: dir, env });
  expect(alice.stdout.trim()).toBe("poet  Alice's poet");
}

describe("deerflow agents", { timeout: 120_000 }, () => {
  it("import into the gateway's SQLite file is idempotent and leaves the files", async () => {
    const { dir, dataDir } = project([]);
    await importTwiceAndList(dir, dataDir, cleanEnv());
    expect(existsSync(path.join(dataDir, "gateway.db"))).toBe(true);
  });

  it("import is refused on agent_storage.backend: file, and list reads the files there", async () => {
    const { dir } = project([], "file");
    const refused = await runCli(["agents", "import"], { cwd: dir, env: cleanEnv() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("agent_storage.backend");
    const list = await runCli(["agents", "list"], { cwd: dir, env: cleanEnv() });
    expect(list.stdout).toContain("poet  Writes poems");
    // a shared legacy agent is listed by the file store (it falls back to the shared layout)
    expect(list.stdout).toContain("old");
  });

  it("serve refuses agent_storage.backend: db on database.backend: memory, naming both keys", async () => {
    const { dir } = project(["database:", "  backend: memory"]);
    const serve = await runCli(["serve", "--port", "0", "--no-web-build"], { cwd: dir, env: cleanEnv() });
    expect(serve.code).not.toBe(0);
    expect(serve.stderr).toMatch(/agent_storage\.backend 'db' needs a durable database, but database\.backend is 'memory'/);
  });

  it("rejects unknown subcommands and stray arguments as usage errors", async () => {
    const { dir } = project([]);
    expect((await runCli(["agents", "export"], { cwd: dir, env: cleanEnv() })).code).toBe(2);
    expect((await runCli(["agents", "import", "extra"], { cwd: dir, env: cleanEnv() })).code).toBe(2);
  });
});

describe.skipIf(!SERVER)("deerflow agents on database.backend: postgres", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "cliagents");
  });
  afterAll(async () => {
    await fresh?.drop();
  });
  const pgLines = (schema: string) => ["database:", "  backend: postgres", "  postgres_url: $DATABASE_URL", `  postgres_schema: ${schema}`];

  it("imports into deerflow_agents, idempotently, and writes no SQLite file", async () => {
    const { dir, dataDir } = project(pgLines("once"));
    await importTwiceAndList(dir, dataDir, cleanEnv({ DATABASE_URL: fresh.url }));
    expect(filesUnder(dataDir).filter((f) => /\.db(-wal|-shm|-journal)?$/.test(f))).toEqual([]);
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      const rows = await client.query("SELECT user_id, name, soul FROM once.deerflow_agents ORDER BY user_id, name");
      expect(rows.rows).toEqual([
        { user_id: "alice", name: "poet", soul: "Haiku only." },
        { user_id: "default", name: "critic", soul: "Be harsh." },
        { user_id: "default", name: "poet", soul: "Speak in rhyme." },
      ]);
    } finally {
      await client.end();
    }
  });

  it("two imports at once import each agent exactly once", async () => {
    const { dir } = project(pgLines("twice"));
    const env = cleanEnv({ DATABASE_URL: fresh.url });
    const [a, b] = await Promise.all([runCli(["agents", "import", "--json"], { cwd: dir, env }), runCli(["agents", "import", "--json"], { cwd: dir, env })]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const outcomes = [a, b].map((r) => JSON.parse(r.stdout) as { imported: unknown[]; existing: unknown[] });
    expect(outcomes[0]!.imported.length + outcomes[1]!.imported.length).toBe(3);
    expect(outcomes[0]!.existing.length + outcomes[1]!.existing.length).toBe(3);
  });
});
