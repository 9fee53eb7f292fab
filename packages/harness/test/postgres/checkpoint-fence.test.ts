/**
 * Fenced checkpoint writes on PostgreSQL: a write carrying a run's lease
 * epoch goes in only while that epoch is the lease's, checked in the insert
 * itself, so a takeover's claim and a stale owner's write can never both
 * succeed. Two pools on one database stand for two processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import type { CheckpointFence, CheckpointRecord } from "../../src/checkpoints/types";
import { openPostgresStorage } from "../../src/postgres";
import type { PostgresStorage } from "../../src/postgres";

const serverUrl = process.env.DEERFLOW_TEST_POSTGRES_URL;

function record(threadId: string, checkpointId: string, parentId: string | null, runId: string): CheckpointRecord {
  return { threadId, checkpointId, parentId, createdAt: new Date().toISOString(), metadata: { step: 0, source: "loop", run_id: runId }, delta: { values: { n: checkpointId } } };
}

describe.skipIf(!serverUrl)("PostgreSQL checkpoint store: lease-fenced writes", () => {
  let db: FreshDatabase;
  let a: PostgresStorage;
  let b: PostgresStorage;

  beforeAll(async () => {
    db = await freshPostgresDatabase(serverUrl!, "ckfence");
    [a, b] = await Promise.all([0, 1].map(() => openPostgresStorage({ url: db.url, log: () => undefined, max: 4 })));
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.drop();
  });

  const ids = async (threadId: string) =>
    (await a.pool.query<{ checkpoint_id: string }>("SELECT checkpoint_id FROM deerflow_checkpoints WHERE thread_id = $1 ORDER BY seq", [threadId])).rows.map((r) => r.checkpoint_id);

  it("a write under the lease's current epoch goes in; after another claim it is refused with checkpoint_stale_owner, its owner told once", async () => {
    const epochA = (await a.runLeases.claim("r1", "t1", "A", 2000, 1000))!;
    const stale: Error[] = [];
    const fenceA: CheckpointFence = { runId: "r1", epoch: epochA, onStale: (e) => stale.push(e) };
    await a.checkpointStore.put(record("t1", "c1", null, "r1"), fenceA);
    // A's heartbeats stopped; B claims the expired lease
    const epochB = (await b.runLeases.claim("r1", "t1", "B", 9000, 2000))!;
    expect(epochB).toBeGreaterThan(epochA);
    // A queues two more steps without waiting (as the loop does): both refused, nothing of them stored
    const p2 = a.checkpointStore.put(record("t1", "c2", "c1", "r1"), fenceA);
    const p3 = a.checkpointStore.put(record("t1", "c3", "c2", "r1"), fenceA);
    await expect(p2).rejects.toMatchObject({ code: "checkpoint_stale_owner", details: { run_id: "r1", epoch: epochA, current_epoch: epochB } });
    await expect(p3).rejects.toMatchObject({ code: expect.stringMatching(/^checkpoint_(stale_owner|parent_missing)$/) });
    expect(stale).toHaveLength(1);
    expect(stale[0]!.message).toMatch(new RegExp(`run r1: this process wrote under lease epoch ${epochA}, but its lease was claimed again \\(epoch ${epochB}\\)`));
    // B writes under its own claim; unfenced writes (state updates, other stores' callers) are not affected
    await b.checkpointStore.put(record("t1", "b2", "c1", "r1"), { runId: "r1", epoch: epochB });
    await b.checkpointStore.put(record("t1", "u3", "b2", "r1"));
    expect(await ids("t1")).toEqual(["c1", "b2", "u3"]);
    // once the lease is gone (the run ended), no fenced write of it goes in either
    await b.runLeases.release("r1", "B");
    await expect(b.checkpointStore.put(record("t1", "b4", "u3", "r1"), { runId: "r1", epoch: epochB })).rejects.toMatchObject({
      code: "checkpoint_stale_owner",
      message: expect.stringContaining("the run holds no lease any more"),
    });
    // a missing parent under a valid fence is still reported as such
    const epoch = (await a.runLeases.claim("r1", "t1", "A", 9000, 0))!;
    await expect(a.checkpointStore.put(record("t1", "x", "nope", "r1"), { runId: "r1", epoch })).rejects.toMatchObject({ code: "checkpoint_parent_missing" });
  });

  it("a write in flight while a claim is uncommitted waits for it, then is refused (the check is in the insert, not before it)", async () => {
    const epochA = (await a.runLeases.claim("r-lock", "t", "A", 1000, 0))!;
    const claimer = await b.pool.connect();
    try {
      await claimer.query("BEGIN");
      // B's claim, not committed yet (the same update a claim makes)
      await claimer.query("UPDATE deerflow_run_leases SET owner = 'B', expires_at = 9000, epoch = nextval('deerflow_run_lease_epochs') WHERE run_id = 'r-lock'");
      const write = a.checkpointStore.put(record("t-lock", "c", null, "r-lock"), { runId: "r-lock", epoch: epochA });
      const outcome = write.then(() => "stored", (e: { code?: string }) => e.code);
      // wait until the write is blocked on the lease row (bounded)
      let waiting = 0;
      for (let i = 0; i < 500 && waiting === 0; i++) {
        waiting = (await a.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n;
      }
      expect(waiting).toBe(1);
      await claimer.query("COMMIT");
      expect(await outcome).toBe("checkpoint_stale_owner");
      expect(await ids("t-lock")).toEqual([]);
    } finally {
      // (destroyed, not pooled: a failed assertion must not leave its open transaction to the next test)
      claimer.release(true);
    }
  });

  it("racing a takeover's claim: no fenced write of the old owner lands after the claim committed", async () => {
    for (let round = 0; round < 5; round++) {
      const run = `race-${round}`;
      const epochA = (await a.runLeases.claim(run, "t", "A", 1000, 0))!;
      const fence = { runId: run, epoch: epochA };
      // 20 writes on 20 threads (each its own statement, in flight together) against B's claim
      const writes = Array.from({ length: 20 }, (_, i) => a.checkpointStore.put(record(`${run}-t${i}`, "c", null, run), fence).then(() => "stored", (e: { code?: string }) => e.code));
      const claimed = b.runLeases.claim(run, "t", "B", 9000, 5000);
      const outcomes = await Promise.all(writes);
      expect(await claimed).toBeGreaterThan(epochA);
      expect(outcomes.every((o) => o === "stored" || o === "checkpoint_stale_owner")).toBe(true);
      // every write after the claim is refused
      for (let i = 0; i < 3; i++) {
        await expect(a.checkpointStore.put(record(`${run}-after${i}`, "c", null, run), fence)).rejects.toMatchObject({ code: "checkpoint_stale_owner" });
      }
      const landed = (await a.pool.query("SELECT count(*)::int AS n FROM deerflow_checkpoints WHERE thread_id LIKE $1", [`${run}-%`])).rows[0].n;
      expect(landed).toBe(outcomes.filter((o) => o === "stored").length);
    }
  });
});
