import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { nextRunAt, ScheduledTaskService } from "../../src/scheduler";
import type { ScheduledRunFinished, ScheduledTaskServiceOptions, ScheduledTaskStore } from "../../src/scheduler";
import { LauncherDouble, newTask } from "./launcher-double";

/** Two stores over one database (two processes' connections) and how to drop it. */
export interface StorePair {
  a: ScheduledTaskStore;
  b: ScheduledTaskStore;
  close(): Promise<void>;
}

const MIN = 60_000;
let seq = 0;
const uid = (p: string) => `${p}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * The scheduler's behaviour over one kind of store: DST walks with a fake
 * clock, overlap, catch-up, manual triggers, recovery of a dead process's
 * task, and two processes racing for the same slots.
 */
export function describeScheduler(label: string, open: () => Promise<StorePair>): void {
  describe(`scheduler over ${label}`, () => {
    let pair: StorePair;
    beforeAll(async () => {
      pair = await open();
    });
    afterAll(async () => {
      await pair?.close();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    const service = (store: ScheduledTaskStore, launcher: LauncherDouble, over: Partial<ScheduledTaskServiceOptions> = {}) =>
      new ScheduledTaskService({ store, launcher, log: () => undefined, leaseMs: 10 * MIN, ...over });

    async function createCron(store: ScheduledTaskStore, cron: string, timezone: string, from: string, over: { threadId?: string } = {}) {
      const id = uid("task");
      const nextRun = nextRunAt("cron", { cron }, timezone, Date.parse(from));
      return store.create(newTask({ id, cron, timezone, nextRunAt: nextRun, createdAt: from, threadId: over.threadId ?? null }));
    }

    /** Walk a fake clock from `from` to `to` in `stepMs` steps, ticking (and letting every run end) at each step. */
    async function walk(svc: ScheduledTaskService, launcher: LauncherDouble, from: string, to: string, stepMs: number) {
      vi.useFakeTimers({ toFake: ["Date"] });
      for (let t = Date.parse(from); t <= Date.parse(to); t += stepMs) {
        vi.setSystemTime(t);
        await svc.tick();
        launcher.finishAll();
        await svc.idle();
      }
    }

    const dstCases = [
      { zone: "Europe/London", cron: "30 1 * * *", from: "2026-03-27T12:00:00Z", to: "2026-03-30T12:00:00Z", want: ["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"] },
      { zone: "Europe/London", cron: "30 1 * * *", from: "2026-10-23T12:00:00Z", to: "2026-10-26T12:00:00Z", want: ["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"] },
      { zone: "America/New_York", cron: "30 2 * * *", from: "2026-03-06T12:00:00Z", to: "2026-03-09T12:00:00Z", want: ["2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z"] },
      { zone: "America/New_York", cron: "30 1 * * *", from: "2026-10-30T12:00:00Z", to: "2026-11-02T12:00:00Z", want: ["2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"] },
    ];
    for (const c of dstCases) {
      it(`${c.zone} '${c.cron}' from ${c.from.slice(0, 10)}: exactly one run per local day across the transition`, async () => {
        const task = await createCron(pair.a, c.cron, c.zone, c.from);
        const launcher = new LauncherDouble();
        const svc = service(pair.a, launcher);
        await walk(svc, launcher, c.from, c.to, 10 * MIN);
        expect(launcher.launches.filter((l) => l.taskId === task.id).map((l) => l.scheduledFor)).toEqual(c.want);
        const runs = await pair.a.listRuns(task.id, 50, 0);
        expect(runs.map((r) => r.status)).toEqual(["success", "success", "success"]);
        await pair.a.update(task.id, { status: "paused" }, c.to);
      });
    }

    it("a slot that comes due while the previous run still runs is skipped and recorded; history is kept newest first", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.parse("2026-06-01T09:00:00Z"));
      const task = await createCron(pair.a, "*/5 * * * *", "UTC", "2026-06-01T08:59:00Z");
      const launcher = new LauncherDouble();
      const svc = service(pair.a, launcher);
      const finished: ScheduledRunFinished[] = [];
      svc.onRunFinished((e) => void finished.push(e));
      expect((await svc.tick()).started).toEqual([task.id]);
      expect((await pair.a.get(task.id))?.status).toBe("running");
      vi.setSystemTime(Date.parse("2026-06-01T09:05:10Z"));
      expect((await svc.tick()).skipped).toEqual([task.id]);
      launcher.launches[0].finish();
      await svc.idle();
      vi.setSystemTime(Date.parse("2026-06-01T09:10:05Z"));
      expect((await svc.tick()).started).toEqual([task.id]);
      launcher.launches[1].finish({ status: "failed", error: "model refused" });
      await svc.idle();
      const runs = await pair.a.listRuns(task.id, 10, 0);
      expect(runs.map((r) => [r.scheduledFor, r.status, r.error])).toEqual([
        ["2026-06-01T09:10:00.000Z", "failed", "model refused"],
        ["2026-06-01T09:05:00.000Z", "skipped", "the previous run of this task was still running"],
        ["2026-06-01T09:00:00.000Z", "success", null],
      ]);
      expect(runs[2]).toMatchObject({ runId: "run-1", threadId: "thread-1", trigger: "scheduled", startedAt: "2026-06-01T09:00:00.000Z", finishedAt: "2026-06-01T09:05:10.000Z" });
      const after = await pair.a.get(task.id);
      expect(after).toMatchObject({ status: "enabled", runCount: 2, lastRunId: "run-2", lastError: "model refused", nextRunAt: "2026-06-01T09:15:00.000Z", leaseOwner: null });
      expect(finished.map((e) => [e.task.id, e.run.status, e.run.runId])).toEqual([
        [task.id, "success", "run-1"],
        [task.id, "failed", "run-2"],
      ]);
      await pair.a.update(task.id, { status: "paused" }, "2026-06-01T10:00:00Z");
    });

    it("catch_up skip: slots missed while no scheduler ran are recorded as skipped, nothing runs, the next future slot is kept", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      const task = await createCron(pair.a, "0 * * * *", "UTC", "2026-07-01T09:30:00Z");
      vi.setSystemTime(Date.parse("2026-07-01T15:20:00Z"));
      const launcher = new LauncherDouble();
      const report = await service(pair.a, launcher, { catchUp: "skip" }).tick();
      expect(report.skipped).toContain(task.id);
      expect(launcher.launches.filter((l) => l.taskId === task.id)).toEqual([]);
      const runs = await pair.a.listRuns(task.id, 10, 0);
      expect(runs.map((r) => [r.scheduledFor, r.status, r.error])).toEqual([["2026-07-01T15:00:00.000Z", "skipped", "missed 6 slots while no scheduler was running (catch_up: skip)"]]);
      expect(await pair.a.get(task.id)).toMatchObject({ status: "enabled", nextRunAt: "2026-07-01T16:00:00.000Z" });
      await pair.a.update(task.id, { status: "paused" }, "2026-07-01T15:20:00Z");
    });

    it("catch_up run_once: one run now for the latest missed slot, the earlier ones recorded as collapsed into it", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      const task = await createCron(pair.a, "0 * * * *", "UTC", "2026-07-02T09:30:00Z");
      vi.setSystemTime(Date.parse("2026-07-02T15:20:00Z"));
      const launcher = new LauncherDouble(true);
      const svc = service(pair.a, launcher, { catchUp: "run_once" });
      await svc.tick();
      await svc.idle();
      expect(launcher.launches.map((l) => l.scheduledFor)).toEqual(["2026-07-02T15:00:00.000Z"]);
      const runs = await pair.a.listRuns(task.id, 10, 0);
      expect(runs.map((r) => [r.scheduledFor, r.status, r.error])).toEqual([
        ["2026-07-02T15:00:00.000Z", "success", null],
        ["2026-07-02T10:00:00.000Z", "skipped", "5 missed slots collapsed into the run for 2026-07-02T15:00:00.000Z (catch_up: run_once)"],
      ]);
      expect(await pair.a.get(task.id)).toMatchObject({ status: "enabled", nextRunAt: "2026-07-02T16:00:00.000Z", runCount: 1 });
      await pair.a.update(task.id, { status: "paused" }, "2026-07-02T15:20:00Z");
    });

    it("a one-off task runs once and completes; one missed under catch_up skip fails with the reason", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.parse("2026-08-01T08:00:00Z"));
      const once = await pair.a.create(newTask({ id: uid("once"), runAt: "2026-08-01T09:00:00Z", nextRunAt: "2026-08-01T09:00:00.000Z" }));
      const missed = await pair.a.create(newTask({ id: uid("once"), runAt: "2026-08-01T09:00:00Z", nextRunAt: "2026-08-01T09:00:00.000Z" }));
      await pair.a.update(missed.id, { status: "paused" }, "2026-08-01T08:00:00Z");
      const launcher = new LauncherDouble(true);
      const svc = service(pair.a, launcher);
      vi.setSystemTime(Date.parse("2026-08-01T09:00:02Z"));
      await svc.tick();
      await svc.idle();
      expect(await pair.a.get(once.id)).toMatchObject({ status: "completed", nextRunAt: null, runCount: 1 });
      await pair.a.update(missed.id, { status: "enabled" }, "2026-08-01T12:00:00Z");
      vi.setSystemTime(Date.parse("2026-08-01T12:00:00Z"));
      await service(pair.a, launcher, { catchUp: "skip" }).tick();
      expect(await pair.a.get(missed.id)).toMatchObject({ status: "failed", nextRunAt: null, lastError: "missed 1 slot while no scheduler was running (catch_up: skip)" });
      expect(launcher.launches.map((l) => l.taskId)).toEqual([once.id]);
    });

    it("a manual trigger runs a paused task and leaves it paused; a second trigger while it runs is a conflict; a failed launch is recorded", async () => {
      const task = await createCron(pair.a, "0 9 * * *", "UTC", "2026-09-01T00:00:00Z", { threadId: "thread-reused" });
      await pair.a.update(task.id, { status: "paused" }, "2026-09-01T00:00:00Z");
      const launcher = new LauncherDouble();
      const svc = service(pair.a, launcher);
      expect(await svc.trigger(task.id)).toEqual({ outcome: "started", runId: "run-1", threadId: "thread-reused" });
      expect((await svc.trigger(task.id)).outcome).toBe("conflict");
      expect(await pair.a.delete(task.id)).toBe("executing");
      launcher.finishAll();
      await svc.idle();
      expect(await pair.a.get(task.id)).toMatchObject({ status: "paused", lastThreadId: "thread-reused", runCount: 1 });
      launcher.failNext = new Error("no such model");
      expect(await svc.trigger(task.id)).toEqual({ outcome: "failed", error: "no such model" });
      await svc.idle();
      const runs = await pair.a.listRuns(task.id, 10, 0);
      expect(runs.map((r) => [r.trigger, r.status, r.error])).toEqual([
        ["manual", "failed", "the run could not be started: no such model"],
        ["manual", "success", null],
      ]);
      expect(await pair.a.delete(task.id)).toBe("deleted");
      expect(await pair.a.listRuns(task.id, 10, 0)).toEqual([]);
    });

    it("a task whose process died is recovered by another process once the lease ran out; the late end of the dead one is not recorded", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.parse("2026-09-02T09:00:00Z"));
      const task = await createCron(pair.a, "0 * * * *", "UTC", "2026-09-02T08:30:00Z");
      const deadLauncher = new LauncherDouble();
      const dead = service(pair.a, deadLauncher, { owner: "dead-process", leaseMs: 2 * MIN });
      expect((await dead.tick()).started).toEqual([task.id]);
      const survivor = service(pair.b, new LauncherDouble(), { owner: "survivor", leaseMs: 2 * MIN });
      vi.setSystemTime(Date.parse("2026-09-02T09:01:00Z"));
      expect((await survivor.tick()).recovered).toEqual([]);
      vi.setSystemTime(Date.parse("2026-09-02T09:03:00Z"));
      expect((await survivor.tick()).recovered).toEqual([task.id]);
      expect(await pair.b.get(task.id)).toMatchObject({ status: "enabled", leaseOwner: null, lastError: "the process running this task stopped before its run ended" });
      expect((await pair.b.listRuns(task.id, 5, 0))[0]).toMatchObject({ status: "interrupted", error: "the process running it stopped" });
      deadLauncher.finishAll();
      await dead.idle();
      expect(await pair.b.get(task.id)).toMatchObject({ status: "enabled", runCount: 0 });
      await pair.a.update(task.id, { status: "paused" }, "2026-09-02T09:03:00Z");
    });

    it("two processes ticking at the same moments: every slot of every task runs exactly once", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      const start = "2026-09-03T10:00:00Z";
      const tasks = await Promise.all(Array.from({ length: 4 }, () => createCron(pair.a, "* * * * *", "UTC", "2026-09-03T09:59:30Z")));
      const la = new LauncherDouble(true);
      const lb = new LauncherDouble(true);
      const a = service(pair.a, la, { owner: "proc-a", maxConcurrentRuns: 10 });
      const b = service(pair.b, lb, { owner: "proc-b", maxConcurrentRuns: 10 });
      for (let i = 0; i < 20; i++) {
        vi.setSystemTime(Date.parse(start) + i * MIN + 1000);
        await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
        await Promise.all([a.idle(), b.idle()]);
      }
      const ids = new Set(tasks.map((t) => t.id));
      const all = [...la.launches, ...lb.launches].filter((l) => ids.has(l.taskId));
      expect(all).toHaveLength(80);
      expect(new Set(all.map((l) => `${l.taskId}@${l.scheduledFor}`)).size).toBe(80);
      for (const t of tasks) {
        const runs = await pair.a.listRuns(t.id, 100, 0);
        expect(runs.filter((r) => r.status === "success")).toHaveLength(20);
        expect(runs.filter((r) => r.status !== "success")).toEqual([]);
        await pair.a.update(t.id, { status: "paused" }, "2026-09-03T11:00:00Z");
      }
    });
  });
}
