import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { runMigrations } from "@deerflow-ts/harness/postgres";
import { freePort, freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { serviceFindings } from "../../src/commands/doctor-services";

const PG = process.env.DEERFLOW_TEST_POSTGRES_URL;
const REDIS = process.env.DEERFLOW_TEST_REDIS_URL;

/** Only the sections the checks read (the rest of AppConfig is irrelevant to them). */
function cfg(sections: { database?: Record<string, unknown>; stream_bridge?: Record<string, unknown> }): AppConfig {
  return sections as unknown as AppConfig;
}

describe("doctor: nothing to check without postgres or redis", () => {
  it("adds no finding for sqlite + the memory bridge", async () => {
    expect(await serviceFindings(cfg({ database: { backend: "sqlite" }, stream_bridge: { type: "memory" } }), {}, 2000)).toEqual([]);
  });

  it("names the missing URL keys", async () => {
    const f = await serviceFindings(cfg({ database: { backend: "postgres", postgres_url: null }, stream_bridge: { type: "redis", redis_url: null } }), {}, 2000);
    expect(f.map((x) => [x.check, x.level])).toEqual([
      ["postgres", "error"],
      ["redis", "error"],
    ]);
    expect(f[0]!.message).toContain("database.postgres_url is not set");
    expect(f[1]!.message).toContain("stream_bridge.redis_url nor DEER_FLOW_STREAM_BRIDGE_REDIS_URL");
  });
});

describe.skipIf(!PG)("doctor: PostgreSQL", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(PG!, "doctor");
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("connects, reports the server version, and the migrations applied", async () => {
    const before = await serviceFindings(cfg({ database: { backend: "postgres", postgres_url: db.url } }), {}, 5000);
    expect(before.map((f) => f.level)).toEqual(["ok", "ok"]);
    expect(before[0]!.message).toMatch(/^connected to PostgreSQL \d+\.\d+ at postgres:\/\/postgres@127\.0\.0\.1:\d+\/doctor_/);
    expect(before[1]!.message).toContain("no migrations applied yet");
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      await runMigrations(pool, "doctor-probe", [
        { version: 1, name: "one", up: "CREATE TABLE doctor_probe (id INT)" },
        { version: 2, name: "two", up: "ALTER TABLE doctor_probe ADD COLUMN name TEXT" },
      ]);
    } finally {
      await pool.end();
    }
    const after = await serviceFindings(cfg({ database: { backend: "postgres", postgres_url: db.url } }), {}, 5000);
    expect(after[1]).toMatchObject({ level: "ok", message: expect.stringContaining("doctor-probe v2") });
  });

  it("fails clearly on an unreachable server and never prints the password", async () => {
    const port = await freePort();
    const url = `postgres://deer:s3cret-pw@127.0.0.1:${port}/deerflow`;
    const f = await serviceFindings(cfg({ database: { backend: "postgres", postgres_url: url } }), {}, 5000);
    expect(f).toHaveLength(1);
    expect(f[0]!.level).toBe("error");
    expect(f[0]!.message).toContain(`Cannot connect to PostgreSQL at postgres://deer:***@127.0.0.1:${port}/deerflow`);
    expect(JSON.stringify(f)).not.toContain("s3cret-pw");
    expect(f[0]!.fix).toContain("database.postgres_url");
  });
});

describe.skipIf(!REDIS)("doctor: Redis", () => {
  it("PINGs and reports the version; the env variable is used when redis_url is absent", async () => {
    const f = await serviceFindings(cfg({ stream_bridge: { type: "redis", redis_url: REDIS } }), {}, 5000);
    expect(f).toHaveLength(1);
    expect(f[0]!.level).toBe("ok");
    expect(f[0]!.message).toMatch(/^Redis \d+\.\d+\.\d+ at redis:\/\/127\.0\.0\.1:\d+.* answered PONG$/);
    const viaEnv = await serviceFindings(cfg({ stream_bridge: { type: "redis", redis_url: null } }), { DEER_FLOW_STREAM_BRIDGE_REDIS_URL: REDIS }, 5000);
    expect(viaEnv[0]!.level).toBe("ok");
  });

  it("fails clearly when nothing listens, with the password masked", async () => {
    const port = await freePort();
    const url = `redis://:r3dis-pw@127.0.0.1:${port}/0`;
    const f = await serviceFindings(cfg({ stream_bridge: { type: "redis", redis_url: url } }), {}, 3000);
    expect(f[0]!.level).toBe("error");
    expect(f[0]!.message).toContain(`cannot use Redis at redis://:***@127.0.0.1:${port}/0`);
    expect(JSON.stringify(f)).not.toContain("r3dis-pw");
    const bad = await serviceFindings(cfg({ stream_bridge: { type: "redis", redis_url: "http://127.0.0.1:6379" } }), {}, 3000);
    expect(bad[0]!.message).toContain("must be a redis:// or rediss:// URL");
  });
});
