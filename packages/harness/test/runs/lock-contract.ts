import { describe, expect, it } from "vitest";
import type { RunLock } from "../../src/runs/backend-types";

/**
 * Locks on one backend: `locks[0]` and `locks[1]` may be two handles (two
 * processes) on the same database, or the same object for in-process ones.
 */
export type RunLockFactory = () => Promise<{ locks: [RunLock, RunLock]; dispose(): Promise<void> }>;

/**
 * What every {@link RunLock} guarantees (memory, SQLite, PostgreSQL): one
 * active run per thread; a holder past `expiresAt` loses the slot; only the
 * holder renews or releases it. Times are epoch ms handed in (no clock).
 */
export function describeRunLockContract(name: string, factory: RunLockFactory): void {
  describe(`${name} run lock (contract)`, () => {
    const withLocks = async (fn: (a: RunLock, b: RunLock) => Promise<void>) => {
      const { locks, dispose } = await factory();
      try {
        await fn(locks[0], locks[1]);
      } finally {
        await dispose();
      }
    };

    it("one run holds a thread until it releases it; threads are independent", () =>
      withLocks(async (a, b) => {
        expect(await a.holder("t1")).toBeUndefined();
        expect(await a.acquire("t1", "r1", "A", 2000, 1000)).toBe(true);
        expect(await b.holder("t1")).toEqual({ runId: "r1", owner: "A", expiresAt: 2000 });
        expect(await b.acquire("t1", "r2", "B", 2500, 1500)).toBe(false);
        expect(await a.holder("t1")).toEqual({ runId: "r1", owner: "A", expiresAt: 2000 });
        expect(await b.acquire("t2", "r2", "B", 2500, 1500)).toBe(true);
        // releasing as another run is a no-op
        await b.release("t1", "r2");
        expect((await a.holder("t1"))?.runId).toBe("r1");
        await a.release("t1", "r1");
        expect(await a.holder("t1")).toBeUndefined();
        expect(await b.acquire("t1", "r2", "B", 3000, 1600)).toBe(true);
        expect(await a.holder("t1")).toEqual({ runId: "r2", owner: "B", expiresAt: 3000 });
      }));

    it("the same run re-acquires its own slot (also from another process, which becomes the owner)", () =>
      withLocks(async (a, b) => {
        expect(await a.acquire("t", "r1", "A", 2000, 1000)).toBe(true);
        expect(await a.acquire("t", "r1", "A", 2600, 1100)).toBe(true);
        expect((await b.holder("t"))?.expiresAt).toBe(2600);
        expect(await b.acquire("t", "r1", "B", 2700, 1200)).toBe(true);
        expect(await a.holder("t")).toEqual({ runId: "r1", owner: "B", expiresAt: 2700 });
      }));

    it("an expired holder loses the slot at its expiry time; the holder can still renew until someone takes it", () =>
      withLocks(async (a, b) => {
        expect(await a.acquire("t", "r1", "A", 2000, 1000)).toBe(true);
        expect(await b.acquire("t", "r2", "B", 3000, 1999)).toBe(false);
        // past expiry but not taken: the holder's renewal still counts
        expect(await a.renew("t", "r1", "A", 4000)).toBe(true);
        expect(await b.acquire("t", "r2", "B", 5000, 3000)).toBe(false);
        expect(await b.acquire("t", "r2", "B", 5000, 4000)).toBe(true);
        expect(await a.renew("t", "r1", "A", 6000)).toBe(false);
        expect(await a.holder("t")).toEqual({ runId: "r2", owner: "B", expiresAt: 5000 });
      }));

    it("only the holder (run and owner) renews; nothing renews a free slot", () =>
      withLocks(async (a, b) => {
        expect(await a.renew("t", "r1", "A", 9000)).toBe(false);
        expect(await a.holder("t")).toBeUndefined();
        expect(await a.acquire("t", "r1", "A", 2000, 1000)).toBe(true);
        expect(await b.renew("t", "r1", "B", 9000)).toBe(false);
        expect(await b.renew("t", "r2", "A", 9000)).toBe(false);
        expect((await a.holder("t"))?.expiresAt).toBe(2000);
        expect(await a.renew("t", "r1", "A", 9000)).toBe(true);
        expect((await b.holder("t"))?.expiresAt).toBe(9000);
        await a.release("t", "r1");
        expect(await a.renew("t", "r1", "A", 9500)).toBe(false);
      }));

    it("of many runs racing for a free thread exactly one wins", () =>
      withLocks(async (a, b) => {
        for (let round = 0; round < 5; round++) {
          const thread = `race-${round}`;
          const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? b : a).acquire(thread, `r${i}`, i % 2 ? "B" : "A", 10_000, 1000)));
          expect(results.filter(Boolean)).toHaveLength(1);
          const winner = results.indexOf(true);
          expect((await a.holder(thread))?.runId).toBe(`r${winner}`);
        }
      }));
  });
}
