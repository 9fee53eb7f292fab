import { describe, expect, it } from "vitest";
import pg from "pg";
import Redis from "ioredis";

const pgUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;
const redisUrl = process.env.DEERFLOW_TEST_REDIS_URL;

describe("test services", () => {
  it.skipIf(!pgUrl)("a real PostgreSQL answers on loopback", async () => {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    const r = await c.query("select 1 + 1 as two");
    await c.end();
    expect(r.rows[0].two).toBe(2);
    expect(new URL(pgUrl!).hostname).toBe("127.0.0.1");
  });
  it.skipIf(!redisUrl)("a real Redis answers on loopback", async () => {
    const r = new Redis(redisUrl!);
    expect(await r.ping()).toBe("PONG");
    await r.quit();
  });
});
