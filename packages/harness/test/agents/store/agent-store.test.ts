import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { FileAgentStore, openAgentStore, PostgresAgentRows, SqlAgentStore, SqliteAgentRows } from "../../../src/agents";
import type { AgentStore } from "../../../src/agents";
import { appConfigFromText } from "../../../src/config";
import { openPgPool, runMigrations } from "../../../src/postgres";
import { AGENTS_COMPONENT, AGENTS_MIGRATIONS } from "../../../src/agents/store/postgres-schema";
import { describeAgentStoreContract } from "./agent-store-contract";

const root = mkdtempSync(path.join(tmpdir(), "df-agent-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const newBase = () => mkdtempSync(path.join(root, `base-${++n}-`));

describeAgentStoreContract("file", async () => {
  const baseDir = newBase();
  return { store: new FileAgentStore(baseDir), baseDir, close: async () => undefined };
});

describeAgentStoreContract("sqlite", async () => {
  const baseDir = newBase();
  const store = new SqlAgentStore(new SqliteAgentRows(path.join(baseDir, "gateway.db")), baseDir);
  return { store, baseDir, close: () => store.close() };
});

/** Two stores on one SQLite file (what two processes on one data dir have): one's writes are the other's reads. */
describe("two SQLite stores on one file", () => {
  it("share agents, changes and the unique name", async () => {
    const baseDir = newBase();
    const file = path.join(baseDir, "gateway.db");
    const a = new SqlAgentStore(new SqliteAgentRows(file), baseDir);
    const b = new SqlAgentStore(new SqliteAgentRows(file), baseDir);
    try {
      await sharedStoreChecks(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

async function sharedStoreChecks(a: AgentStore, b: AgentStore): Promise<void> {
  await a.create("u", { name: "shared", description: "from a" }, "soul a");
  expect(await b.get("u", "shared")).toEqual({ name: "shared", description: "from a", soul: "soul a" });
  const before = await b.signature("u", "shared");
  await b.update("u", "shared", null, "soul b");
  expect((await a.get("u", "shared")).soul).toBe("soul b");
  expect(await a.signature("u", "shared")).toBe(await b.signature("u", "shared"));
  expect(await a.signature("u", "shared")).not.toBe(before);
  const outcomes = await Promise.allSettled([...Array.from({ length: 4 }, () => a.create("u", { name: "race" }, "a")), ...Array.from({ length: 4 }, () => b.create("u", { name: "race" }, "b"))]);
  expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
  expect(outcomes.filter((o) => o.status === "rejected").map((o) => ((o as PromiseRejectedResult).reason as { code: string }).code)).toEqual(Array(7).fill("agent_exists"));
  expect(await b.delete("u", "shared")).toBe("deleted");
  expect(await a.exists("u", "shared")).toBe(false);
}

describe("openAgentStore", () => {
  const cfg = (text: string) => appConfigFromText(text).config;
  it("opens the file store by default and on agent_storage.backend: file", async () => {
    const baseDir = newBase();
    expect((await openAgentStore(undefined, { dataDir: baseDir })).kind).toBe("file");
    expect((await openAgentStore(cfg("agent_storage:\n  backend: file\n"), { dataDir: baseDir })).kind).toBe("file");
  });
  it("opens the gateway's SQLite file for db on database.backend sqlite (the default)", async () => {
    const baseDir = newBase();
    const store = await openAgentStore(cfg("agent_storage:\n  backend: db\n"), { dataDir: baseDir });
    try {
      expect(store.kind).toBe("sqlite");
      await store.create("u", { name: "x" }, "s");
      const rows = new SqliteAgentRows(path.join(baseDir, "gateway.db"));
      expect((await rows.row("u", "x"))?.soul).toBe("s");
      await rows.close();
    } finally {
      await store.close();
    }
  });
  it("refuses db on database.backend memory, naming both keys", async () => {
    const err = await openAgentStore(cfg("agent_storage:\n  backend: db\ndatabase:\n  backend: memory\n"), { dataDir: newBase() }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("agent_storage.backend");
    expect((err as Error).message).toContain("database.backend");
    expect((err as { code?: string }).code).toBe("agent_storage_invalid");
  });
});

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
describe.skipIf(!serverUrl)("postgres", () => {
  let db: FreshDatabase;
  const pools: pg.Pool[] = [];
  // openPgPool: its pools report a connection the server drops instead of raising it unhandled
  const pool = async () => {
    const p = await openPgPool({ url: db.url, max: 4, log: () => undefined });
    pools.push(p);
    return p;
  };
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!, "agents");
    await runMigrations(await pool(), AGENTS_COMPONENT, AGENTS_MIGRATIONS);
  });
  afterAll(async () => {
    for (const p of pools) await p.end();
    await db?.drop();
  });

  // A schema per store: the migrations run there and no test sees another's rows.
  let schemas = 0;
  describeAgentStoreContract("postgres", async () => {
    const baseDir = newBase();
    const p = await openPgPool({ url: db.url, schema: `ag_${++schemas}`, max: 4, log: () => undefined });
    await runMigrations(p, AGENTS_COMPONENT, AGENTS_MIGRATIONS);
    const store = new SqlAgentStore(new PostgresAgentRows(p), baseDir);
    return { store, baseDir, close: () => p.end() };
  });

  it("two pools (two processes' worth) share agents, changes and the unique name", async () => {
    const baseDir = newBase();
    await sharedStoreChecks(new SqlAgentStore(new PostgresAgentRows(await pool()), baseDir), new SqlAgentStore(new PostgresAgentRows(await pool()), baseDir));
  });

  it("openAgentStore migrates the agents table on the pool it is given (idempotent)", async () => {
    const p = await pool();
    const config = appConfigFromText(`agent_storage:\n  backend: db\ndatabase:\n  backend: postgres\n  postgres_url: ${db.url}\n`).config;
    const store = await openAgentStore(config, { dataDir: newBase(), pgPool: p });
    expect(store.kind).toBe("postgres");
    const again = await runMigrations(p, AGENTS_COMPONENT, AGENTS_MIGRATIONS);
    expect(again.applied).toEqual([]);
  });
});
