import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { ConfigError } from "../../src/errors";
import { maskCredentials, maskUrl, openPgPool } from "../../src/postgres";
import { normalizePgUrl } from "../../src/postgres/pool";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

describe("maskUrl", () => {
  it("hides the password and keeps user, host, port and database", () => {
    expect(maskUrl("postgres://alice:hunter2@db.internal:5433/deerflow")).toBe("postgres://alice:***@db.internal:5433/deerflow");
    expect(maskUrl("postgres://alice@db/deerflow")).toBe("postgres://alice@db/deerflow");
    expect(maskUrl("postgres://u:p@h/d?sslpassword=abc&sslmode=require")).toBe("postgres://u:***@h/d?sslpassword=***&sslmode=require");
  });
  it("masks a URL the parser refuses", () => {
    expect(maskUrl("postgres://alice:pa ss%@[bad/db")).not.toContain("pa ss");
  });
  it("removes the URL and the bare password from free text", () => {
    const url = "postgres://alice:hunter2@db:5432/x";
    expect(maskCredentials(`connect ${url} failed; password hunter2 rejected`, url)).toBe("connect postgres://alice:***@db:5432/x failed; password *** rejected");
  });
});

describe("normalizePgUrl", () => {
  it("drops a SQLAlchemy driver suffix (DeerFlow's configs may carry one) and keeps the rest", () => {
    expect(normalizePgUrl("postgresql+asyncpg://u:p@h:5432/d?sslmode=require")).toBe("postgresql://u:p@h:5432/d?sslmode=require");
    expect(normalizePgUrl(" postgres+psycopg://u@h/d ")).toBe("postgres://u@h/d");
    expect(normalizePgUrl("postgres://u@h/d")).toBe("postgres://u@h/d");
    expect(normalizePgUrl("mysql+pymysql://u@h/d")).toBe("mysql+pymysql://u@h/d");
  });
});

describe.skipIf(!serverUrl)("openPgPool", () => {
  let db: FreshDatabase;
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("sets search_path to the schema, creating it once even when pools open together", async () => {
    const pools = await Promise.all(Array.from({ length: 4 }, () => openPgPool({ url: db.url, schema: "deerflow_app", log: () => undefined })));
    try {
      for (const pool of pools) {
        const r = await pool.query<{ s: string }>("SELECT current_schema() AS s");
        expect(r.rows[0].s).toBe("deerflow_app");
      }
      await pools[0].query("CREATE TABLE probe (x int)");
      const where = await pools[1].query<{ n: string }>("SELECT table_schema AS n FROM information_schema.tables WHERE table_name = 'probe'");
      expect(where.rows.map((r) => r.n)).toEqual(["deerflow_app"]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it("connections dropped by the server are logged (masked) and replaced: the pool keeps serving", async () => {
    const u = new URL(db.url);
    u.password = "dropped-pw";
    const logged: string[] = [];
    let sawDrop!: () => void;
    const dropped = new Promise<void>((resolve) => (sawDrop = resolve));
    const pool = await openPgPool({
      url: u.toString(),
      schema: "drops",
      log: (m) => {
        logged.push(m);
        if (logged.length === 2) sawDrop();
      },
    });
    try {
      // Two idle connections, then the server ends every one of them (as a restart or a failover would).
      const [c1, c2] = [await pool.connect(), await pool.connect()];
      const pids = [(await c1.query("SELECT pg_backend_pid() AS p")).rows[0].p, (await c2.query("SELECT pg_backend_pid() AS p")).rows[0].p];
      c1.release();
      c2.release();
      const admin = await openPgPool({ url: db.url, log: () => undefined, max: 1 });
      await admin.query("SELECT pg_terminate_backend(p) FROM unnest($1::int[]) AS p", [pids]);
      await admin.end();
      await dropped; // both idle connections reported their end
      expect(logged.every((m) => /failed while idle/.test(m))).toBe(true);
      expect(logged.join("\n")).not.toContain("dropped-pw");
      expect((await pool.query<{ s: string }>("SELECT current_schema() AS s")).rows[0].s).toBe("drops");
    } finally {
      await pool.end();
    }
  });

  it("uses the server's default search_path without a schema", async () => {
    const pool = await openPgPool({ url: db.url, log: () => undefined });
    try {
      expect((await pool.query<{ s: string }>("SELECT current_schema() AS s")).rows[0].s).toBe("public");
    } finally {
      await pool.end();
    }
  });

  it("refuses a schema that is not a plain lower-case identifier", async () => {
    for (const schema of ["x; DROP TABLE y", "Mixed", "9lives", "deerflow\n"]) {
      await expect(openPgPool({ url: db.url, schema, log: () => undefined })).rejects.toMatchObject({
        details: { key: "database.postgres_schema" },
      });
    }
  });

  it("accepts DeerFlow's postgresql+asyncpg:// form", async () => {
    const pool = await openPgPool({ url: db.url.replace(/^postgres(ql)?:/, "postgresql+asyncpg:"), log: () => undefined });
    try {
      expect((await pool.query<{ n: number }>("SELECT 1 AS n")).rows[0].n).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("a statement over the statement timeout fails its caller; the pool keeps serving", async () => {
    const pool = await openPgPool({ url: db.url, statementTimeoutMs: 50, log: () => undefined });
    try {
      await expect(pool.query("SELECT pg_sleep(2)")).rejects.toThrow(/statement timeout/);
      expect((await pool.query<{ n: number }>("SELECT 2 AS n")).rows[0].n).toBe(2);
    } finally {
      await pool.end();
    }
  });

  it("names the key and masks the password when the server cannot be reached", async () => {
    const port = await freePort();
    const url = `postgres://alice:s3cret-pw@127.0.0.1:${port}/deerflow`;
    const err = await openPgPool({ url, log: () => undefined }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.code).toBe("postgres_unreachable");
    expect(e.message).toContain("database.postgres_url");
    expect(e.message).toContain(`postgres://alice:***@127.0.0.1:${port}/deerflow`);
    expect(e.message).not.toContain("s3cret-pw");
    expect(JSON.stringify(e.details)).not.toContain("s3cret-pw");
  });

  it("reports a missing database with the password masked", async () => {
    const u = new URL(db.url);
    u.username = "postgres";
    u.password = "an0ther-secret";
    u.pathname = "/no_such_database";
    const err = (await openPgPool({ url: u.toString(), log: () => undefined }).catch((e: unknown) => e)) as ConfigError;
    expect(err.message).toMatch(/no_such_database/);
    expect(err.message).not.toContain("an0ther-secret");
  });

  it("refuses a URL that is not postgres://", async () => {
    await expect(openPgPool({ url: "mysql://u:pw123@h/d", log: () => undefined })).rejects.toThrow(/postgres:\/\/.*mysql:\/\/u:\*\*\*@h\/d/);
  });
});
