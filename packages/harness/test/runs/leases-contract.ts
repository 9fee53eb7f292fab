import { describe, expect, it } from "vitest";
import type { RunLeases } from "../../src/runs/backend-types";

/** Leases on one backend: two handles on the same database, or the same object for in-process ones. */
export type RunLeasesFactory = () => Promise<{ leases: [RunLeases, RunLeases]; dispose(): Promise<void> }>;

/**
 * What every {@link RunLeases} guarantees (memory, SQLite, PostgreSQL): one
 * owner per run; renewals by that owner only; an expired lease is taken over
 * by exactly one process; expired leases listed oldest first. Times are
 * epoch ms handed in (no clock).
 */
export function describeRunLeasesContract(name: string, factory: RunLeasesFactory): void {
  describe(`${name} run leases (contract)`, () => {
    const withLeases = async (fn: (a: RunLeases, b: RunLeases) => Promise<void>) => {
      const { leases, dispose } = await factory();
      try {
        await fn(leases[0], leases[1]);
      } finally {
        await dispose();
      }
    };

    it("an owner takes, renews and releases a run's lease; others cannot until it expires", () =>
      withLeases(async (a, b) => {
        expect(await a.get("r1")).toBeUndefined();
        expect(await a.acquire("r1", "t1", "A", 2000, 1000)).toBe(true);
        expect(await b.get("r1")).toEqual({ runId: "r1", threadId: "t1", owner: "A", expiresAt: 2000 });
        expect(await b.acquire("r1", "t1", "B", 3000, 1500)).toBe(false);
        expect(await b.renew("r1", "B", 3000)).toBe(false);
        expect(await a.acquire("r1", "t1", "A", 2500, 1500)).toBe(true); // its own again
        expect(await a.renew("r1", "A", 3500)).toBe(true);
        expect((await b.get("r1"))?.expiresAt).toBe(3500);
        await b.release("r1", "B"); // not B's: no-op
        expect((await a.get("r1"))?.owner).toBe("A");
        await a.release("r1", "A");
        expect(await b.get("r1")).toBeUndefined();
        expect(await a.renew("r1", "A", 4000)).toBe(false);
      }));

    it("an expired lease is taken over (from its expiry time on), and the old owner's renewals then fail", () =>
      withLeases(async (a, b) => {
        expect(await a.acquire("r", "t", "A", 2000, 1000)).toBe(true);
        expect(await b.acquire("r", "t", "B", 5000, 1999)).toBe(false);
        expect(await b.acquire("r", "t", "B", 5000, 2000)).toBe(true);
        expect(await a.renew("r", "A", 6000)).toBe(false);
        await a.release("r", "A");
        expect(await b.get("r")).toEqual({ runId: "r", threadId: "t", owner: "B", expiresAt: 5000 });
      }));

    it("lists leases that expired before a time, oldest first, up to a limit", () =>
      withLeases(async (a, b) => {
        await a.acquire("late", "t", "A", 3000, 0);
        await b.acquire("early", "t", "B", 1000, 0);
        await a.acquire("mid", "t", "A", 2000, 0);
        await b.acquire("live", "t", "B", 9000, 0);
        expect((await a.expired(2500, 10)).map((l) => l.runId)).toEqual(["early", "mid"]);
        expect((await b.expired(3001, 2)).map((l) => l.runId)).toEqual(["early", "mid"]);
        expect(await a.expired(1000, 10)).toEqual([]);
        expect((await a.expired(1001, 10))[0]).toEqual({ runId: "early", threadId: "t", owner: "B", expiresAt: 1000 });
        await b.renew("early", "B", 8000);
        expect((await a.expired(2500, 10)).map((l) => l.runId)).toEqual(["mid"]);
      }));

    it("each claim gets an epoch above every earlier claim (also after a release); renewals keep it; a refused claim gets none", () =>
      withLeases(async (a, b) => {
        expect(typeof a.claim).toBe("function");
        const claim = (l: RunLeases, ...args: Parameters<NonNullable<RunLeases["claim"]>>) => l.claim!(...args);
        const e1 = (await claim(a, "e", "t", "A", 2000, 1000))!;
        expect(e1).toBeGreaterThan(0);
        expect(await claim(b, "e", "t", "B", 3000, 1500)).toBeUndefined();
        const e2 = (await claim(a, "e", "t", "A", 2500, 1500))!; // its own again: a new claim all the same
        expect(e2).toBeGreaterThan(e1);
        expect(await a.renew("e", "A", 4000)).toBe(true);
        const e3 = (await claim(b, "e", "t", "B", 9000, 4000))!; // taken over once expired
        expect(e3).toBeGreaterThan(e2);
        expect(await b.renew("e", "B", 9500)).toBe(true);
        await b.release("e", "B");
        const e4 = (await claim(a, "e", "t", "A", 10_000, 0))!;
        expect(e4).toBeGreaterThan(e3);
        // acquire is a claim too
        expect(await b.acquire("e", "t", "B", 20_000, 10_000)).toBe(true);
        expect((await claim(b, "e", "t", "B", 20_000, 0))!).toBeGreaterThan(e4 + 1);
        // the lease itself reads as before
        expect(await a.get("e")).toEqual({ runId: "e", threadId: "t", owner: "B", expiresAt: 20_000 });
      }));

    it("of many processes racing to take over an expired lease exactly one wins", () =>
      withLeases(async (a, b) => {
        for (let round = 0; round < 5; round++) {
          const run = `takeover-${round}`;
          expect(await a.acquire(run, "t", "dead", 1000, 0)).toBe(true);
          const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? b : a).acquire(run, "t", `P${i}`, 50_000, 2000)));
          expect(results.filter(Boolean)).toHaveLength(1);
          expect((await b.get(run))?.owner).toBe(`P${results.indexOf(true)}`);
        }
      }));
  });
}
