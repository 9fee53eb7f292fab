import { randomUUID } from "node:crypto";
import os from "node:os";
import { DeerFlowError } from "../errors";
import { Schedule } from "./schedule";
import type { ScheduledTaskStore } from "./store";
import type { CatchUpPolicy, ScheduledRunTrigger, ScheduledTask, ScheduledTaskRun, ScheduledTaskStatus } from "./types";

/** How a scheduled run ended, as the launcher reports it. */
export interface LaunchedRunEnd {
  status: "success" | "failed" | "interrupted";
  error: string | null;
}

/** A run the launcher started for an occurrence. */
export interface LaunchedRun {
  runId: string;
  threadId: string;
  /** Settles when the run ended (never rejects). */
  ended: Promise<LaunchedRunEnd>;
}

/**
 * Starts the agent run of an occurrence. The application supplies it (the
 * server starts runs through the same run service as its HTTP routes);
 * the harness only decides when and records what happened.
 */
export interface ScheduledRunLauncher {
  launch(task: ScheduledTask, occurrence: { runRowId: string; trigger: ScheduledRunTrigger; scheduledFor: string }): Promise<LaunchedRun>;
}

/** Emitted once per occurrence that ran, after its end was recorded (for pushing results elsewhere, e.g. a chat channel). */
export interface ScheduledRunFinished {
  /** The task as it was when the occurrence started. */
  task: ScheduledTask;
  /** The occurrence's final history row. */
  run: ScheduledTaskRun;
}

/** What one {@link ScheduledTaskService.tick} did. */
export interface TickReport {
  started: string[];
  skipped: string[];
  recovered: string[];
}

/** The outcome of a manual trigger. */
export type TriggerOutcome = { outcome: "started"; runId: string; threadId: string } | { outcome: "conflict"; error: string } | { outcome: "failed"; error: string };

/** Options of {@link ScheduledTaskService}. */
export interface ScheduledTaskServiceOptions {
  store: ScheduledTaskStore;
  launcher: ScheduledRunLauncher;
  /** This process's name in leases (default host:pid:random). */
  owner?: string;
  /** The clock (epoch ms); tests pass a fake one. */
  now?: () => number;
  /** What to do with slots missed while no scheduler ran (default `run_once`). */
  catchUp?: CatchUpPolicy;
  /** A slot this much past due is a missed slot (default: 60 s or three poll intervals, whichever is longer). */
  lateAfterMs?: number;
  /** How often {@link ScheduledTaskService.start}'s loop looks for due slots (default 5 s). */
  pollIntervalMs?: number;
  /** How long a claim holds a task without renewal (default 120 s); renewed every third of it while the run lasts. */
  leaseMs?: number;
  /** Occurrences this process runs at once (default 3); due slots beyond wait for a later tick. */
  maxConcurrentRuns?: number;
  log?: (message: string) => void;
}

/** Statuses from which a manual trigger may start an occurrence (anything but `running`). */
const TRIGGERABLE: readonly ScheduledTaskStatus[] = ["enabled", "paused", "completed", "failed", "cancelled"];

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new DeerFlowError("scheduler_options_invalid", `ScheduledTaskService option ${name} must be a positive number, got ${value}.`);
  return value;
}

/**
 * The scheduler: finds due slots, claims each in the store (exactly one
 * process wins a slot), starts its run through the launcher, keeps the
 * lease while it runs and records how it ended. A slot that comes due while
 * the task's previous occurrence still runs is skipped and recorded; slots
 * missed while no scheduler ran follow the catch-up policy.
 */
export class ScheduledTaskService {
  readonly owner: string;
  private readonly store: ScheduledTaskStore;
  private readonly launcher: ScheduledRunLauncher;
  private readonly now: () => number;
  private readonly catchUp: CatchUpPolicy;
  private readonly lateAfterMs: number;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly maxConcurrent: number;
  private readonly log: (message: string) => void;
  private readonly active = new Map<string, Promise<void>>();
  private readonly listeners = new Set<(event: ScheduledRunFinished) => void | Promise<void>>();
  private timer?: ReturnType<typeof setTimeout>;
  private ticking?: Promise<TickReport>;
  private stopped = true;

  constructor(options: ScheduledTaskServiceOptions) {
    if (options.catchUp !== undefined && options.catchUp !== "skip" && options.catchUp !== "run_once") {
      throw new DeerFlowError("scheduler_options_invalid", `scheduler.catch_up must be 'skip' or 'run_once', got '${String(options.catchUp)}'.`);
    }
    this.store = options.store;
    this.launcher = options.launcher;
    this.owner = options.owner ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.now = options.now ?? (() => Date.now()); // read at each call, so a faked Date is seen
    this.catchUp = options.catchUp ?? "run_once";
    this.pollIntervalMs = positive("pollIntervalMs", options.pollIntervalMs, 5000);
    this.lateAfterMs = positive("lateAfterMs", options.lateAfterMs, Math.max(60_000, 3 * this.pollIntervalMs));
    this.leaseMs = positive("leaseMs", options.leaseMs, 120_000);
    this.maxConcurrent = Math.floor(positive("maxConcurrentRuns", options.maxConcurrentRuns, 3));
    this.log = options.log ?? ((m) => console.error(m));
  }

  /** The catch-up policy in force. */
  get catchUpPolicy(): CatchUpPolicy {
    return this.catchUp;
  }

  /** Subscribe to finished occurrences; returns the unsubscribe function. A listener's failure is logged, never the scheduler's. */
  onRunFinished(listener: (event: ScheduledRunFinished) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Poll for due slots every `pollIntervalMs` until {@link stop}. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      void this.tick()
        .catch((err: unknown) => this.log(`[scheduler] tick failed: ${(err as Error).message}`))
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(loop, this.pollIntervalMs);
          this.timer.unref?.();
        });
    };
    loop();
  }

  /** Stop polling and wait for the occurrences this process runs to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking?.catch(() => undefined);
    await this.idle();
  }

  /** Resolves when every occurrence this process started has been recorded. */
  async idle(): Promise<void> {
    while (this.active.size) await Promise.all([...this.active.values()]);
  }

  /** One pass: recover tasks whose process died, then claim and start (or skip) every due slot. */
  tick(): Promise<TickReport> {
    // one pass at a time per process (a manual tick from a test and the loop never interleave)
    const run = (this.ticking ?? Promise.resolve()).catch(() => undefined).then(() => this.tickOnce());
    this.ticking = run;
    return run;
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  private async tickOnce(): Promise<TickReport> {
    const report: TickReport = { started: [], skipped: [], recovered: [] };
    const now = this.now();
    const nowIso = this.iso(now);
    for (const t of await this.store.expired(now, 50)) {
      if (t.leaseOwner && (await this.store.recover(t.id, t.leaseOwner, now, nowIso))) {
        this.log(`[scheduler] task ${t.id}: its run's process (${t.leaseOwner}) stopped renewing; the occurrence is marked interrupted`);
        report.recovered.push(t.id);
      }
    }
    for (const task of await this.store.due(nowIso, 100)) {
      try {
        await this.handleDue(task, now, report);
      } catch (err) {
        this.log(`[scheduler] task ${task.id}: ${(err as Error).message}`);
      }
    }
    return report;
  }

  private row(task: ScheduledTask, scheduledFor: string, trigger: ScheduledRunTrigger, status: ScheduledTaskRun["status"], error: string | null, nowIso: string): ScheduledTaskRun {
    const finished = status === "skipped" ? nowIso : null;
    return { id: randomUUID(), taskId: task.id, threadId: task.threadId ?? "", runId: null, scheduledFor, trigger, status, error, startedAt: null, finishedAt: finished, createdAt: nowIso };
  }

  private async handleDue(task: ScheduledTask, now: number, report: TickReport): Promise<void> {
    const nowIso = this.iso(now);
    let schedule: Schedule;
    try {
      schedule = new Schedule(task.scheduleType, task.scheduleSpec, task.timezone);
    } catch (err) {
      // an unusable stored schedule stops this task only
      const message = `schedule can no longer be computed: ${(err as Error).message}`;
      if (task.status === "enabled") {
        await this.store.claim({ taskId: task.id, expectedNextRunAt: task.nextRunAt, expectedStatuses: ["enabled"], nextRunAt: null, status: "failed", runs: [], lastError: message, updatedAt: nowIso });
      }
      this.log(`[scheduler] task ${task.id}: ${message}`);
      return;
    }
    const first = Date.parse(task.nextRunAt!);
    const { count, latest, capped } = schedule.slotsThrough(first, now);
    const counted = `${count}${capped ? "+" : ""}`;
    const next = schedule.nextAfter(now);
    const nextIso = next === null ? null : this.iso(next);
    const latestIso = this.iso(latest);

    if (task.status === "running") {
      // the previous occurrence still runs: this slot is skipped, and says so in the history
      const error = count > 1 ? `${counted} slots came due while the previous run was still running` : "the previous run of this task was still running";
      const won = await this.store.claim({
        taskId: task.id,
        expectedNextRunAt: task.nextRunAt,
        expectedStatuses: ["running"],
        nextRunAt: nextIso,
        status: "running",
        runs: [this.row(task, latestIso, "scheduled", "skipped", error, nowIso)],
        updatedAt: nowIso,
      });
      if (won) report.skipped.push(task.id);
      return;
    }

    const late = now - first > this.lateAfterMs;
    if (late && this.catchUp === "skip") {
      const error = `missed ${counted} slot${count === 1 ? "" : "s"} while no scheduler was running (catch_up: skip)`;
      const won = await this.store.claim({
        taskId: task.id,
        expectedNextRunAt: task.nextRunAt,
        expectedStatuses: ["enabled"],
        nextRunAt: nextIso,
        status: task.scheduleType === "once" ? "failed" : "enabled",
        runs: [this.row(task, latestIso, "scheduled", "skipped", error, nowIso)],
        lastError: error,
        updatedAt: nowIso,
      });
      if (won) report.skipped.push(task.id);
      return;
    }
    if (this.active.size >= this.maxConcurrent) return; // a later tick takes it (the slot stays due)

    const runs: ScheduledTaskRun[] = [];
    if (count > 1) runs.push(this.row(task, this.iso(first), "scheduled", "skipped", `${count - 1}${capped ? "+" : ""} missed slot${count === 2 ? "" : "s"} collapsed into the run for ${latestIso} (catch_up: run_once)`, nowIso));
    const occurrence = this.row(task, latestIso, "scheduled", "queued", null, nowIso);
    runs.push(occurrence);
    const won = await this.store.claim({
      taskId: task.id,
      expectedNextRunAt: task.nextRunAt,
      expectedStatuses: ["enabled"],
      nextRunAt: nextIso,
      status: "running",
      lease: { owner: this.owner, until: now + this.leaseMs, resumeStatus: "enabled" },
      runs,
      updatedAt: nowIso,
    });
    if (!won) return;
    report.started.push(task.id);
    await this.execute({ ...task, nextRunAt: nextIso }, occurrence, "enabled").catch(() => undefined);
  }

  /**
   * Start an occurrence now (`POST /scheduled-tasks/{id}/trigger`), whatever
   * the schedule says; the task's status afterwards is the one it had. A
   * task whose occurrence is running is a conflict.
   */
  async trigger(taskId: string): Promise<TriggerOutcome> {
    const task = await this.store.get(taskId);
    if (!task) return { outcome: "failed", error: `Scheduled task ${taskId} not found` };
    if (task.status === "running") return { outcome: "conflict", error: "Scheduled task is currently running; retry after the active execution finishes" };
    const now = this.now();
    const nowIso = this.iso(now);
    const occurrence = this.row(task, nowIso, "manual", "queued", null, nowIso);
    const won = await this.store.claim({
      taskId,
      expectedNextRunAt: null,
      expectedStatuses: TRIGGERABLE,
      nextRunAt: task.nextRunAt,
      status: "running",
      lease: { owner: this.owner, until: now + this.leaseMs, resumeStatus: task.status },
      runs: [occurrence],
      updatedAt: nowIso,
    });
    if (!won) return { outcome: "conflict", error: "Scheduled task trigger conflicted with an active run" };
    try {
      const launched = await this.execute(task, occurrence, task.status);
      return { outcome: "started", runId: launched.runId, threadId: launched.threadId };
    } catch (err) {
      return { outcome: "failed", error: (err as Error).message };
    }
  }

  /**
   * Launch the occurrence and follow it to its end in the background.
   * Resolves once the run started; rejects when it could not be started
   * (that end is recorded as `failed` first).
   */
  private execute(task: ScheduledTask, occurrence: ScheduledTaskRun, resumeStatus: ScheduledTaskStatus): Promise<LaunchedRun> {
    let startedResolve!: (run: LaunchedRun) => void;
    let startedReject!: (err: Error) => void;
    const started = new Promise<LaunchedRun>((resolve, reject) => {
      startedResolve = resolve;
      startedReject = reject;
    });
    const follow = (async () => {
      const renew = setInterval(() => {
        void this.store.renewLease(task.id, this.owner, this.now() + this.leaseMs).then(
          (held) => {
            if (!held) this.log(`[scheduler] task ${task.id}: lost its lease while the run went on`);
          },
          (err: unknown) => this.log(`[scheduler] task ${task.id}: lease renewal failed: ${(err as Error).message}`),
        );
      }, Math.max(1000, Math.floor(this.leaseMs / 3)));
      renew.unref?.();
      let end: LaunchedRunEnd;
      let runId: string | null = null;
      let threadId = occurrence.threadId;
      let startedAt: string | null = null;
      try {
        const launched = await this.launcher.launch(task, { runRowId: occurrence.id, trigger: occurrence.trigger, scheduledFor: occurrence.scheduledFor });
        runId = launched.runId;
        threadId = launched.threadId;
        startedAt = this.iso(this.now());
        await this.store.markStarted(occurrence.id, launched.runId, launched.threadId, startedAt);
        startedResolve(launched);
        end = await launched.ended;
      } catch (err) {
        end = { status: "failed", error: `the run could not be started: ${(err as Error).message}` };
        startedReject(err as Error);
      } finally {
        clearInterval(renew);
      }
      const onceDone = task.scheduleType === "once" && occurrence.trigger === "scheduled";
      const taskStatus: ScheduledTaskStatus = onceDone ? (end.status === "success" ? "completed" : "failed") : resumeStatus;
      const finishedAt = this.iso(this.now());
      const recorded = await this.store.complete({ taskId: task.id, runRowId: occurrence.id, owner: this.owner, status: end.status, error: end.error, runId, threadId, finishedAt, taskStatus });
      if (!recorded) {
        this.log(`[scheduler] task ${task.id}: its run ended after another process took the task over; the end was not recorded`);
        return;
      }
      const run: ScheduledTaskRun = { ...occurrence, runId, threadId, status: end.status, error: end.error, startedAt, finishedAt };
      for (const listener of this.listeners) {
        try {
          await listener({ task, run });
        } catch (err) {
          this.log(`[scheduler] a run-finished listener failed for task ${task.id}: ${(err as Error).message}`);
        }
      }
    })()
      .catch((err: unknown) => this.log(`[scheduler] task ${task.id}: recording its run failed: ${(err as Error).message}`))
      .finally(() => this.active.delete(occurrence.id));
    this.active.set(occurrence.id, follow);
    return started;
  }
}
