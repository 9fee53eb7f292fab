import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import { openPostgresStorage } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

// Six pools on one database stand for six server processes: every call goes over its own connections.
describe.skipIf(!serverUrl)("PostgreSQL run lock and leases under concurrent processes", () => {
  let db: FreshDatabase;
  let procs: PostgresStorage[];
  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!);
    // Started at the same moment: the migrations run once, nobody fails.
    procs = await Promise.all(Array.from({ length: 6 }, () => openPostgresStorage({ url: db.url, schema: "procs", log: () => undefined, max: 3 })));
  });
  afterAll(async () => {
    await Promise.all((procs ?? []).map((p) => p.close()));
    await db?.drop();
  });

  it("started together, the processes applied each migration once", async () => {
    const r = await procs[0].pool.query<{ component: string; n: number }>(
      "SELECT component, count(*)::int AS n FROM deerflow_migrations GROUP BY component ORDER BY component",
    );
    expect(r.rows).toEqual([
      { component: "checkpoints", n: 1 },
      { component: "persistence", n: 1 },
      { component: "run_backends", n: 2 },
    ]);
  });

  it("every process racing for 30 threads: each thread gets exactly one run", async () => {
    const threads = Array.from({ length: 30 }, (_, i) => `thread-${i}`);
    const attempts = await Promise.all(
      procs.flatMap((p, pi) => threads.map(async (t) => ({ t, pi, won: await p.runLock.acquire(t, `run-${pi}-${t}`, `proc-${pi}`, 60_000, 1000) }))),
    );
    for (const t of threads) {
      const winners = attempts.filter((a) => a.t === t && a.won);
      expect(winners).toHaveLength(1);
      expect(await procs[3].runLock.holder(t)).toEqual({ runId: `run-${winners[0].pi}-${t}`, owner: `proc-${winners[0].pi}`, expiresAt: 60_000 });
    }
  });

  it("expired leases of a dead process are each taken over by exactly one survivor", async () => {
    for (let i = 0; i < 20; i++) expect(await procs[0].runLeases.acquire(`lease-${i}`, `t-${i}`, "dead", 5_000 + i, 1000)).toBe(true);
    const now = 10_000;
    const claims = await Promise.all(
      procs.slice(1).map(async (p, pi) => {
        const won: string[] = [];
        for (const lease of await p.runLeases.expired(now, 100)) {
          if (lease.owner === "dead" && (await p.runLeases.acquire(lease.runId, lease.threadId, `survivor-${pi}`, now + 30_000, now))) won.push(lease.runId);
        }
        return won;
      }),
    );
    const all = claims.flat().sort();
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => `lease-${i}`).sort());
    for (let i = 0; i < 20; i++) {
      const lease = await procs[0].runLeases.get(`lease-${i}`);
      expect(lease?.owner).toMatch(/^survivor-/);
      expect(claims[Number(lease!.owner.split("-")[1])]).toContain(`lease-${i}`);
    }
    expect(await procs[0].runLeases.renew("lease-0", "dead", 99_000)).toBe(false);
  });
});
