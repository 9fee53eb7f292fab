/**
 * `deerflow doctor` only looks: on a fresh PostgreSQL database it reports the
 * accounts as not initialised yet and leaves the database as it found it — no
 * table, no schema, no migration — with or without `postgres_schema`. Once
 * the tables exist (here: the gateway's account store, as `serve` or
 * `deerflow users add` opens it), it counts the accounts in them.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openAccountStore } from "@deerflow-ts/server";
import { runDoctor } from "../../src/commands/doctor";
import { tempDir } from "../helpers";

const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;

/** Every table and non-system schema of the database. */
async function contents(url: string): Promise<{ tables: string[]; schemas: string[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ t: string }>(
      "SELECT table_schema || '.' || table_name AS t FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
    );
    const schemas = await client.query<{ s: string }>(
      "SELECT schema_name AS s FROM information_schema.schemata WHERE schema_name NOT IN ('pg_catalog', 'information_schema', 'public', 'pg_toast') AND schema_name NOT LIKE 'pg_temp%' AND schema_name NOT LIKE 'pg_toast_temp%' ORDER BY 1",
    );
    return { tables: tables.rows.map((r) => r.t), schemas: schemas.rows.map((r) => r.s) };
  } finally {
    await client.end();
  }
}

describe.skipIf(!SERVER)("doctor on a fresh PostgreSQL database is read-only", { timeout: 120_000 }, () => {
  let fresh: FreshDatabase;
  let dir: string;
  let dataDir: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "clidoctorro");
    dir = tempDir();
    dataDir = path.join(dir, ".deer-flow");
    process.env.DEERFLOW_TEST_DOCTOR_RO_PG_URL = fresh.url;
    process.env.DEER_FLOW_JWT_SECRET = "r".repeat(48);
  });
  afterAll(async () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    await fresh?.drop();
  });

  const configWith = (database: string[]) =>
    writeFileSync(path.join(dir, "config.yaml"), ["sandbox:", "  use: local", "database:", "  backend: postgres", "  postgres_url: $DEERFLOW_TEST_DOCTOR_RO_PG_URL", ...database, "auth:", "  enabled: true", "  jwt_secret: $DEER_FLOW_JWT_SECRET", ""].join("\n"));
  const doctor = async () => (await runDoctor({ cwd: dir, dataDir, skipModel: true, timeoutMs: 5000 })).filter((f) => f.check === "auth" || f.check === "postgres");

  it("reports 'not initialised yet' and creates no table and no schema (public, and postgres_schema)", async () => {
    expect(await contents(fresh.url)).toEqual({ tables: [], schemas: [] });
    for (const database of [[], ["  postgres_schema: df_doctor_ro"]]) {
      configWith(database);
      const findings = await doctor();
      expect(findings.find((f) => f.check === "auth")).toEqual({
        check: "auth",
        level: "warn",
        message: "enabled: secret set (48 characters, at least 32); accounts: not initialised yet (tables are created at first `serve`)",
        fix: expect.stringContaining("deerflow users add EMAIL --admin"),
      });
      expect(findings.filter((f) => f.check === "postgres").map((f) => f.message)).toEqual([
        expect.stringMatching(/^connected to PostgreSQL \d+/),
        "no migrations applied yet: `deerflow serve` creates the tables on its first start",
      ]);
      expect(await contents(fresh.url)).toEqual({ tables: [], schemas: [] });
    }
  });

  it("counts the accounts once the tables exist, in the configured schema", async () => {
    configWith(["  postgres_schema: df_doctor_ro"]);
    const store = openAccountStore({ dataDir, database: { backend: "postgres", postgres_url: fresh.url, postgres_schema: "df_doctor_ro" } });
    try {
      await store.create({ email: "admin@example.org", password: "correct-horse-battery", systemRole: "admin", needsSetup: false });
    } finally {
      await store.close();
    }
    const findings = await doctor();
    expect(findings.find((f) => f.check === "auth")).toEqual({ check: "auth", level: "ok", message: "enabled: secret set (48 characters, at least 32), 1 account(s), 1 admin(s); admin exists" });
    expect(findings.filter((f) => f.check === "postgres")[1]?.message).toMatch(/^migrations: .*auth v1/);
    // without the schema, the same database's default schema has no accounts yet
    configWith([]);
    expect((await doctor()).find((f) => f.check === "auth")?.message).toContain("accounts: not initialised yet");
  });
});
