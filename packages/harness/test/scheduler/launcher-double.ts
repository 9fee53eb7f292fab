import type { LaunchedRunEnd, ScheduledRunLauncher, ScheduledTask } from "../../src/scheduler";

/** One launch the double saw. */
export interface Launch {
  taskId: string;
  trigger: string;
  scheduledFor: string;
  runId: string;
  threadId: string;
  /** Ends the run (the double's runs last until told). */
  finish(end?: LaunchedRunEnd): void;
}

/**
 * A launcher whose runs last until the test ends them (or end at once with
 * `autoFinish`): it stands for the server's run service in harness tests.
 */
export class LauncherDouble implements ScheduledRunLauncher {
  readonly launches: Launch[] = [];
  failNext?: Error;

  constructor(private readonly autoFinish = false) {}

  async launch(task: ScheduledTask, occurrence: { runRowId: string; trigger: string; scheduledFor: string }) {
    if (this.failNext) {
      const err = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    let finish!: (end?: LaunchedRunEnd) => void;
    const ended = new Promise<LaunchedRunEnd>((resolve) => {
      finish = (end) => resolve(end ?? { status: "success", error: null });
    });
    const runId = `run-${this.launches.length + 1}`;
    const threadId = task.threadId ?? `thread-${this.launches.length + 1}`;
    this.launches.push({ taskId: task.id, trigger: occurrence.trigger, scheduledFor: occurrence.scheduledFor, runId, threadId, finish });
    if (this.autoFinish) finish();
    return { runId, threadId, ended };
  }

  finishAll(): void {
    for (const l of this.launches) l.finish();
  }
}

/** A task as the routes create it. */
export function newTask(over: Partial<{ id: string; cron: string; runAt: string; timezone: string; threadId: string | null; nextRunAt: string | null; createdAt: string }>) {
  const cron = over.runAt === undefined;
  return {
    id: over.id ?? "task-1",
    userId: "u1",
    threadId: over.threadId ?? null,
    contextMode: (over.threadId ? "reuse_thread" : "fresh_thread_per_run") as "reuse_thread" | "fresh_thread_per_run",
    assistantId: "lead_agent",
    title: "Daily report",
    prompt: "Summarise the news",
    scheduleType: (cron ? "cron" : "once") as "cron" | "once",
    scheduleSpec: cron ? { cron: over.cron ?? "0 9 * * *" } : { run_at: over.runAt },
    timezone: over.timezone ?? "UTC",
    nextRunAt: over.nextRunAt ?? null,
    createdAt: over.createdAt ?? "2026-01-01T00:00:00.000Z",
  };
}
