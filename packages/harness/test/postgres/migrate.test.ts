import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { MigrationError, openPgPool, runMigrations } from "../../src/postgres";
import type { Migration } from "../../src/postgres";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

// Not idempotent on purpose: applying either twice fails (duplicate table) or shows (two ledger rows).
const MIGRATIONS: Migration[] = [
  { version: 1, name: "widgets", up: "CREATE TABLE widgets (id int PRIMARY KEY); CREATE TABLE ledger (version int NOT NULL)" },
  { version: 2, name: "widgets_name", up: "ALTER TABLE widgets ADD COLUMN name text; INSERT INTO ledger VALUES (2)" },
  {
    version: 3,
    name: "ledger_by_code",
    up: async (client: pg.PoolClient) => {
      await client.query("INSERT INTO ledger VALUES ($1)", [3]);
    },
  },
];

describe.skipIf(!serverUrl)("runMigrations", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("8 pools migrating at the same moment apply each migration exactly once", async () => {
    const pools = await Promise.all(Array.from({ length: 8 }, () => openPgPool({ url: db.url, schema: "race", log: () => undefined, max: 2 })));
    try {
      const outcomes = await Promise.all(pools.map((p) => runMigrations(p, "widgets", MIGRATIONS)));
      const applied = outcomes.flatMap((o) => o.applied).sort();
      expect(applied).toEqual([1, 2, 3]);
      // One pool did all the work; the others found nothing left.
      expect(outcomes.filter((o) => o.applied.length > 0)).toHaveLength(1);
      const ledger = await pools[0].query<{ version: number }>("SELECT version FROM ledger ORDER BY version");
      expect(ledger.rows.map((r) => r.version)).toEqual([2, 3]);
      const rows = await pools[0].query<{ version: number; name: string }>(
        "SELECT version, name FROM deerflow_migrations WHERE component = 'widgets' ORDER BY version",
      );
      expect(rows.rows).toEqual([
        { version: 1, name: "widgets" },
        { version: 2, name: "widgets_name" },
        { version: 3, name: "ledger_by_code" },
      ]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it("is idempotent and applies only what is new; components are independent", async () => {
    const pool = await openPgPool({ url: db.url, schema: "steps", log: () => undefined });
    try {
      expect((await runMigrations(pool, "widgets", MIGRATIONS.slice(0, 1))).applied).toEqual([1]);
      expect((await runMigrations(pool, "widgets", MIGRATIONS.slice(0, 1))).applied).toEqual([]);
      expect((await runMigrations(pool, "widgets", MIGRATIONS)).applied).toEqual([2, 3]);
      expect((await runMigrations(pool, "widgets", MIGRATIONS)).applied).toEqual([]);
      expect((await runMigrations(pool, "other", [{ version: 1, name: "gadgets", up: "CREATE TABLE gadgets (id int)" }])).applied).toEqual([1]);
      // Older code on a newer database: the unknown versions are reported, nothing fails.
      const older = await runMigrations(pool, "widgets", MIGRATIONS.slice(0, 2));
      expect(older).toEqual({ applied: [], unknown: [3] });
    } finally {
      await pool.end();
    }
  });

  it("a failing migration keeps nothing of the call and names the migration", async () => {
    const pool = await openPgPool({ url: db.url, schema: "failing", log: () => undefined });
    try {
      const broken: Migration[] = [
        { version: 1, name: "good", up: "CREATE TABLE good (id int)" },
        { version: 2, name: "bad", up: "CREATE TABLE bad (id nosuchtype)" },
      ];
      const err = (await runMigrations(pool, "broken", broken).catch((e: unknown) => e)) as MigrationError;
      expect(err).toBeInstanceOf(MigrationError);
      expect(err.code).toBe("postgres_migration_failed");
      expect(err.message).toContain("migration 2 (bad) of broken");
      const good = await pool.query("SELECT to_regclass('good') AS t");
      expect(good.rows[0].t).toBeNull();
      // Even the ledger table this first run created is gone: nothing was recorded.
      expect((await pool.query("SELECT to_regclass('deerflow_migrations') AS t")).rows[0].t).toBeNull();
      // Fixed, it applies both.
      expect((await runMigrations(pool, "broken", [broken[0], { version: 2, name: "bad", up: "CREATE TABLE bad (id int)" }])).applied).toEqual([1, 2]);
    } finally {
      await pool.end();
    }
  });

  it("a migration may outlast the pool's statement timeout", async () => {
    const pool = await openPgPool({ url: db.url, schema: "slow", statementTimeoutMs: 50, log: () => undefined });
    try {
      const slow: Migration[] = [{ version: 1, name: "slow", up: "SELECT pg_sleep(0.3); CREATE TABLE slow_done (id int)" }];
      expect((await runMigrations(pool, "slow", slow)).applied).toEqual([1]);
      await expect(pool.query("SELECT pg_sleep(2)")).rejects.toThrow(/statement timeout/);
    } finally {
      await pool.end();
    }
  });

  it("refuses duplicate or non-positive versions before touching the database", async () => {
    const pool = await openPgPool({ url: db.url, log: () => undefined });
    try {
      await expect(runMigrations(pool, "dup", [MIGRATIONS[0], { ...MIGRATIONS[1], version: 1 }])).rejects.toThrow(/version 1 of dup is defined twice/);
      await expect(runMigrations(pool, "neg", [{ version: 0, name: "zero", up: "SELECT 1" }])).rejects.toThrow(/positive integers/);
    } finally {
      await pool.end();
    }
  });
});
