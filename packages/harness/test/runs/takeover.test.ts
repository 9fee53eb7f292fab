import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryRunLeases, SqliteRunLocks } from "../../src/persistence/run-locks";
import type { RunLease, RunLeases } from "../../src/runs/backend-types";
import { RunTakeover } from "../../src/runs/takeover";
import type { RunTakeoverOptions, TakeoverTimers } from "../../src/runs/takeover";

const OWNERSHIP = { leaseMs: 3000, graceMs: 1000, heartbeat: true };

/** Timers driven by the test: `fire()` runs what is due at the current clock. */
class ManualTimers implements TakeoverTimers {
  private next = 1;
  readonly pending = new Map<number, { at: number; fn: () => void }>();
  constructor(private readonly clock: { now: number }) {}
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { at: this.clock.now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** The delays asked for, in order of creation. */
  dueTimes(): number[] {
    return [...this.pending.values()].map((p) => p.at);
  }
  fire(): number {
    let n = 0;
    for (const [id, p] of [...this.pending]) {
      if (p.at > this.clock.now) continue;
      this.pending.delete(id);
      p.fn();
      n++;
    }
    return n;
  }
}

interface Harness {
  takeover: RunTakeover;
  resumed: RunLease[];
  failed: Array<{ lease: RunLease; reason: unknown }>;
  logs: string[];
}

function harness(leases: RunLeases, ownerId: string, clock: { now: number }, over: Partial<RunTakeoverOptions> = {}): Harness {
  const resumed: RunLease[] = [];
  const failed: Array<{ lease: RunLease; reason: unknown }> = [];
  const logs: string[] = [];
  const takeover = new RunTakeover({
    leases,
    ownerId,
    ownership: OWNERSHIP,
    now: () => clock.now,
    resume: async (lease) => {
      resumed.push(lease);
    },
    fail: async (lease, reason) => {
      failed.push({ lease, reason });
    },
    runsLocally: () => false,
    log: (m) => logs.push(m),
    ...over,
  });
  return { takeover, resumed, failed, logs };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("RunTakeover", () => {
  it("takes over a dead owner's run only after lease + grace, and holds the lease for a new term", async () => {
    const clock = { now: 10_000 };
    const leases = new MemoryRunLeases();
    await leases.acquire("run-1", "thread-1", "proc-A", 13_000, clock.now);
    const b = harness(leases, "proc-B", clock);
    clock.now = 13_500; // expired, still within grace: a heartbeat may be late
    expect(await b.takeover.round()).toEqual({ resumed: [], failed: [], lost: [] });
    expect((await leases.get("run-1"))?.owner).toBe("proc-A");
    clock.now = 14_001;
    expect(await b.takeover.round()).toEqual({ resumed: ["run-1"], failed: [], lost: [] });
    expect(b.resumed).toEqual([{ runId: "run-1", threadId: "thread-1", owner: "proc-B", expiresAt: 17_001 }]);
    expect(await leases.get("run-1")).toEqual({ runId: "run-1", threadId: "thread-1", owner: "proc-B", expiresAt: 17_001 });
    expect(b.logs.join("\n")).toContain("taking over run run-1 of thread thread-1 from proc-A");
    // nothing left to take: a second round does nothing
    clock.now = 15_000;
    expect((await b.takeover.round()).resumed).toEqual([]);
  });

  it("runs a round every lease/3 on its timers, never two at once, and stops", async () => {
    const clock = { now: 0 };
    const timers = new ManualTimers(clock);
    const leases = new MemoryRunLeases();
    let release: () => void = () => undefined;
    let resumes = 0;
    const b = harness(leases, "proc-B", clock, {
      timers,
      resume: () => {
        resumes++;
        return new Promise<void>((r) => (release = r));
      },
    });
    expect(b.takeover.intervalMs).toBe(1000);
    b.takeover.start();
    expect(timers.dueTimes()).toEqual([1000]);
    await leases.acquire("run-1", "t1", "proc-A", -5000, -9000); // expired long before grace
    clock.now = 1000;
    expect(timers.fire()).toBe(1);
    // the round is in progress (its resume has not settled): asking for one returns the same round
    await until(() => resumes === 1);
    const same = b.takeover.round();
    expect(timers.dueTimes()).toEqual([]); // the next round is scheduled only after this one
    release();
    expect((await same).resumed).toEqual(["run-1"]);
    await until(() => timers.dueTimes().length === 1);
    expect(timers.dueTimes()).toEqual([2000]);
    await b.takeover.stop();
    expect(timers.dueTimes()).toEqual([]);
    expect(resumes).toBe(1);
  });

  it("exactly one of two processes claims each expired lease (two handles on one SQLite file)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "takeover-"));
    dirs.push(dir);
    const file = path.join(dir, "gateway.db");
    const [p1, p2, dead] = [new SqliteRunLocks(file), new SqliteRunLocks(file), new SqliteRunLocks(file)];
    try {
      const clock = { now: 50_000 };
      for (let i = 0; i < 20; i++) await dead.leases.acquire(`run-${i}`, `thread-${i}`, "proc-A", 40_000 + i, 39_000);
      const b = harness(p1.leases, "proc-B", clock);
      const c = harness(p2.leases, "proc-C", clock);
      const [rb, rc] = await Promise.all([b.takeover.round(), c.takeover.round()]);
      const all = [...rb.resumed, ...rc.resumed].sort();
      expect(all).toEqual(Array.from({ length: 20 }, (_, i) => `run-${i}`).sort());
      expect(new Set(all).size).toBe(20);
      for (const id of rb.resumed) expect((await dead.leases.get(id))?.owner).toBe("proc-B");
      for (const id of rc.resumed) expect((await dead.leases.get(id))?.owner).toBe("proc-C");
      // whatever one lost, the other resumed
      expect([...rb.lost].sort()).toEqual(rb.lost.filter((id) => rc.resumed.includes(id)).sort());
    } finally {
      p1.close();
      p2.close();
      dead.close();
    }
  });

  it("ends a run that cannot be resumed and drops its lease; a failed ending is retried by a later round", async () => {
    const clock = { now: 100_000 };
    const leases = new MemoryRunLeases();
    await leases.acquire("run-x", "t", "proc-A", 90_000, 0);
    let failures = 0;
    const b = harness(leases, "proc-B", clock, {
      resume: async () => {
        throw new Error("no checkpoint to resume from");
      },
      fail: async () => {
        failures++;
        if (failures === 1) throw new Error("database unavailable");
      },
    });
    // first round: resume refuses, the ending fails: the lease stays ours (and expires again)
    expect(await b.takeover.round()).toEqual({ resumed: [], failed: [], lost: [] });
    expect((await leases.get("run-x"))?.owner).toBe("proc-B");
    expect(b.logs.join("\n")).toContain("run run-x cannot be resumed: no checkpoint to resume from");
    expect(b.logs.join("\n")).toContain("ending run run-x as failed did not complete: database unavailable");
    clock.now += OWNERSHIP.leaseMs + OWNERSHIP.graceMs + 1;
    expect(await b.takeover.round()).toEqual({ resumed: [], failed: ["run-x"], lost: [] });
    expect(await leases.get("run-x")).toBeUndefined();
    expect(failures).toBe(2);
  });

  it("leaves its own run alone while it executes it (a late heartbeat), takes its own orphan", async () => {
    const clock = { now: 100_000 };
    const leases = new MemoryRunLeases();
    await leases.acquire("mine-live", "t1", "proc-B", 1000, 0);
    await leases.acquire("mine-orphan", "t2", "proc-B", 1000, 0);
    const b = harness(leases, "proc-B", clock, { runsLocally: (id) => id === "mine-live" });
    expect((await b.takeover.round()).resumed).toEqual(["mine-orphan"]);
  });

  it("takes over more than one batch in one round (a crash of a busy process)", async () => {
    const clock = { now: 1_000_000 };
    const leases = new MemoryRunLeases();
    for (let i = 0; i < 70; i++) await leases.acquire(`r${i}`, `t${i}`, "proc-A", 1000 + i, 0);
    const b = harness(leases, "proc-B", clock, { batch: 16 });
    const round = await b.takeover.round();
    expect(round.resumed).toHaveLength(70);
    expect(round.resumed.slice(0, 3)).toEqual(["r0", "r1", "r2"]); // oldest first
  });
});

/** Wait (bounded) for a condition that the awaited microtasks make true. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise<void>((r) => setImmediate(r));
  expect(cond()).toBe(true);
}
