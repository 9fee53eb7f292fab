import { persistenceDbPath } from "@deerflow-ts/harness";
import { PostgresScheduledTaskStore, ScheduledTaskService, SqliteScheduledTaskStore } from "@deerflow-ts/harness/scheduler";
import type { CatchUpPolicy, ScheduledRunFinished, ScheduledTaskStore } from "@deerflow-ts/harness/scheduler";
import { z } from "zod";
import type { GatewayContext } from "../context";
import { createScheduledRunLauncher } from "./launcher";

/** `scheduler:` as the gateway reads it (DeerFlow's keys, plus `catch_up`). */
export interface SchedulerSettings {
  enabled: boolean;
  pollIntervalSeconds: number;
  leaseSeconds: number;
  maxConcurrentRuns: number;
  minOnceDelaySeconds: number;
  catchUp: CatchUpPolicy;
}

const settingsSchema = z.looseObject({
  enabled: z.boolean().default(false),
  poll_interval_seconds: z.number().positive().default(5),
  lease_seconds: z.number().positive().default(120),
  max_concurrent_runs: z.number().int().positive().default(3),
  min_once_delay_seconds: z.number().min(0).default(60),
  catch_up: z.enum(["skip", "run_once"], { error: "scheduler.catch_up must be 'skip' or 'run_once'" }).default("run_once"),
});

/** The `scheduler:` section of the runtime's config (defaults when absent); a bad value names its key. */
export function schedulerSettings(ctx: GatewayContext): SchedulerSettings {
  const raw = (ctx.runtime.config() as { scheduler?: unknown } | undefined)?.scheduler ?? {};
  const parsed = settingsSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`config.yaml scheduler.${String(issue?.path[0] ?? "")}: ${issue?.message}`);
  }
  const s = parsed.data;
  return {
    enabled: s.enabled,
    pollIntervalSeconds: s.poll_interval_seconds,
    leaseSeconds: s.lease_seconds,
    maxConcurrentRuns: s.max_concurrent_runs,
    minOnceDelaySeconds: s.min_once_delay_seconds,
    catchUp: s.catch_up,
  };
}

/** The gateway's scheduled tasks: their store and the scheduler that runs them. */
export interface ScheduledTasks {
  readonly store: ScheduledTaskStore;
  readonly service: ScheduledTaskService;
  readonly settings: SchedulerSettings;
}

const opened = new WeakMap<object, ScheduledTasks>();
const pendingListeners = new WeakMap<object, Array<(e: ScheduledRunFinished) => void | Promise<void>>>();

/**
 * The store on the runtime's database: PostgreSQL through the runtime's pool
 * when `database.backend` is postgres, else `gateway.db` in the data dir
 * (an in-memory database with `backend: memory`).
 */
function openStore(ctx: GatewayContext): ScheduledTaskStore {
  if (ctx.runtime.pgPool) return new PostgresScheduledTaskStore(ctx.runtime.pgPool);
  const backend = (ctx.runtime.config() as { database?: { backend?: string } | null } | undefined)?.database?.backend;
  return new SqliteScheduledTaskStore(backend === "memory" ? ":memory:" : persistenceDbPath(ctx.runtime.dataDir));
}

/**
 * The gateway's scheduled tasks, opened on first use (a gateway that never
 * schedules anything never opens the tables). Closed with the runtime.
 */
export function scheduledTasksFor(ctx: GatewayContext): ScheduledTasks {
  const key = ctx.runtime;
  let tasks = opened.get(key);
  if (tasks) return tasks;
  const settings = schedulerSettings(ctx);
  const store = openStore(ctx);
  const service = new ScheduledTaskService({
    store,
    launcher: createScheduledRunLauncher(ctx),
    catchUp: settings.catchUp,
    pollIntervalMs: settings.pollIntervalSeconds * 1000,
    leaseMs: settings.leaseSeconds * 1000,
    maxConcurrentRuns: settings.maxConcurrentRuns,
    log: ctx.options.log,
  });
  for (const l of pendingListeners.get(key) ?? []) service.onRunFinished(l);
  pendingListeners.delete(key);
  tasks = { store, service, settings };
  opened.set(key, tasks);
  ctx.runtime.onClose(async () => {
    await service.stop();
    await store.close();
    opened.delete(key);
  });
  return tasks;
}

/** Start the background scheduler when `scheduler.enabled` is true (DeerFlow's master switch; off by default). */
export function startScheduler(ctx: GatewayContext): ScheduledTasks | undefined {
  if (!schedulerSettings(ctx).enabled) return undefined;
  const tasks = scheduledTasksFor(ctx);
  tasks.service.start();
  ctx.options.log(`[scheduler] polling every ${tasks.settings.pollIntervalSeconds}s (catch_up: ${tasks.settings.catchUp}, owner ${tasks.service.owner})`);
  return tasks;
}

/**
 * Subscribe to "a scheduled run finished" on the gateway serving `runtime`
 * (e.g. to push its result to a chat channel): called once per occurrence
 * that ran, after its end was recorded. Works before the scheduler opened;
 * returns the unsubscribe function.
 */
export function onScheduledRunFinished(ctx: Pick<GatewayContext, "runtime">, listener: (event: ScheduledRunFinished) => void | Promise<void>): () => void {
  const tasks = opened.get(ctx.runtime);
  if (tasks) return tasks.service.onRunFinished(listener);
  const list = pendingListeners.get(ctx.runtime) ?? [];
  list.push(listener);
  pendingListeners.set(ctx.runtime, list);
  return () => {
    const cur = opened.get(ctx.runtime);
    // opened since: the listener was handed to the service, whose unsubscribe (of the same function) removes it
    if (cur) return void cur.service.onRunFinished(listener)();
    const l = pendingListeners.get(ctx.runtime);
    if (l) l.splice(l.indexOf(listener), 1);
  };
}
