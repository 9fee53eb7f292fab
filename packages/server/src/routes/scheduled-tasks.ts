import { randomUUID } from "node:crypto";
import { nextRunAt, normalizeCron, parseRunAt, ScheduleError, validateTimezone } from "@deerflow-ts/harness/scheduler";
import type { ScheduledTask, ScheduledTaskPatch, ScheduledTaskRun, ScheduleSpec, ScheduleType } from "@deerflow-ts/harness/scheduler";
import type { Context, Hono } from "hono";
import { z } from "zod";
import { userOf } from "../auth";
import type { GatewayContext } from "../context";
import { HttpError } from "../http-error";
import { scheduledTasksFor } from "../scheduled-tasks";
import { checkThreadId, ID_PATTERN, readJson } from "../validate";
import { isOwnedByCaller, threadOf } from "./thread-access";

const contextMode = z.enum(["fresh_thread_per_run", "reuse_thread"], { error: "Unsupported context_mode (expected fresh_thread_per_run or reuse_thread)" });
const threadIdField = z.string().regex(ID_PATTERN, "thread_id must be a thread id").nullish();

const createSchema = z.object({
  thread_id: threadIdField,
  context_mode: contextMode.default("fresh_thread_per_run"),
  title: z.string().min(1),
  prompt: z.string().min(1),
  schedule_type: z.enum(["once", "cron"], { error: "Unsupported schedule_type (expected once or cron)" }),
  schedule_spec: z.record(z.string(), z.unknown()),
  timezone: z.string().min(1),
});

const updateSchema = z.object({
  context_mode: contextMode.nullish(),
  thread_id: threadIdField,
  title: z.string().min(1).nullish(),
  prompt: z.string().min(1).nullish(),
  schedule_spec: z.record(z.string(), z.unknown()).nullish(),
  timezone: z.string().min(1).nullish(),
});

const runsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

const RUNNING = "Scheduled task is currently running; retry after the active execution finishes";

/** A task in DeerFlow's wire shape. */
export function taskResponse(t: ScheduledTask): Record<string, unknown> {
  return {
    id: t.id,
    user_id: t.userId,
    thread_id: t.threadId,
    context_mode: t.contextMode,
    assistant_id: t.assistantId,
    title: t.title,
    prompt: t.prompt,
    schedule_type: t.scheduleType,
    schedule_spec: t.scheduleSpec,
    timezone: t.timezone,
    status: t.status,
    next_run_at: t.nextRunAt,
    last_run_at: t.lastRunAt,
    last_run_id: t.lastRunId,
    last_thread_id: t.lastThreadId,
    last_error: t.lastError,
    run_count: t.runCount,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
}

/** An occurrence in DeerFlow's wire shape. */
export function runRowResponse(r: ScheduledTaskRun): Record<string, unknown> {
  return {
    id: r.id,
    task_id: r.taskId,
    thread_id: r.threadId,
    run_id: r.runId,
    scheduled_for: r.scheduledFor,
    trigger: r.trigger,
    status: r.status,
    error: r.error,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    created_at: r.createdAt,
  };
}

/** The schedule's spec normalised and its first slot after now; 422 with the reason when unusable. */
function planSchedule(ctx: GatewayContext, type: ScheduleType, rawSpec: Record<string, unknown>, timezone: string): { spec: ScheduleSpec; next: string | null } {
  const spec: ScheduleSpec = {};
  try {
    validateTimezone(timezone);
    if (type === "cron") {
      if (typeof rawSpec.cron !== "string") throw new HttpError(422, "cron schedule requires schedule_spec.cron");
      spec.cron = normalizeCron(rawSpec.cron);
    } else {
      parseRunAt(rawSpec.run_at);
      spec.run_at = String(rawSpec.run_at).trim();
    }
    const now = Date.now();
    const next = nextRunAt(type, spec, timezone, now);
    if (type === "once") {
      if (next === null) throw new HttpError(422, "once schedule must be in the future");
      const min = scheduledTasksFor(ctx).settings.minOnceDelaySeconds;
      if (Date.parse(next) - now < min * 1000) throw new HttpError(422, `once schedule must be at least ${min} seconds in the future`);
    }
    return { spec, next };
  } catch (err) {
    if (err instanceof ScheduleError) throw new HttpError(422, err.message);
    throw err;
  }
}

/**
 * DeerFlow's scheduled tasks API: `GET/POST /scheduled-tasks`,
 * `GET/PATCH/DELETE /scheduled-tasks/{id}`, `POST /scheduled-tasks/{id}/pause|resume|trigger`,
 * `GET /scheduled-tasks/{id}/runs` and `GET /threads/{id}/scheduled-tasks`.
 * A task belongs to the caller who created it: another user's task is 404.
 */
export function registerScheduledTaskRoutes(app: Hono, ctx: GatewayContext): void {
  const max = ctx.options.maxBodyBytes;
  const tasks = () => scheduledTasksFor(ctx);

  /** The caller's task, or 404. */
  const ownTask = async (c: Context): Promise<ScheduledTask> => {
    const id = c.req.param("task_id") ?? "";
    const task = await tasks().store.get(id);
    if (!task || task.userId !== userOf(c).id) throw new HttpError(404, "Scheduled task not found");
    return task;
  };

  /** A thread the caller owns (404 otherwise), for reuse_thread. */
  const requireOwnThread = async (c: Context, threadId: string) => {
    const row = await ctx.stores.threads.get(threadId);
    if (!row || !isOwnedByCaller(ctx, c, row.userId)) throw new HttpError(404, "Thread not found");
  };

  app.get("/scheduled-tasks", async (c) => c.json((await tasks().store.list(userOf(c).id)).map(taskResponse)));

  app.post("/scheduled-tasks", async (c) => {
    const body = await readJson(c, createSchema, max);
    if (body.context_mode === "reuse_thread") {
      if (!body.thread_id) throw new HttpError(422, "reuse_thread requires thread_id");
      await requireOwnThread(c, body.thread_id);
    }
    const { spec, next } = planSchedule(ctx, body.schedule_type, body.schedule_spec, body.timezone);
    const task = await tasks().store.create({
      id: `task-${randomUUID().replace(/-/g, "")}`,
      userId: userOf(c).id,
      threadId: body.context_mode === "reuse_thread" ? body.thread_id! : (body.thread_id ?? null),
      contextMode: body.context_mode,
      assistantId: "lead_agent",
      title: body.title,
      prompt: body.prompt,
      scheduleType: body.schedule_type,
      scheduleSpec: spec,
      timezone: body.timezone,
      nextRunAt: next,
      createdAt: new Date().toISOString(),
    });
    return c.json(taskResponse(task));
  });

  app.get("/scheduled-tasks/:task_id", async (c) => c.json(taskResponse(await ownTask(c))));

  app.patch("/scheduled-tasks/:task_id", async (c) => {
    const existing = await ownTask(c);
    if (existing.status === "running") throw new HttpError(409, RUNNING);
    const body = await readJson(c, updateSchema, max);
    const patch: ScheduledTaskPatch = {};
    if (body.title) patch.title = body.title;
    if (body.prompt) patch.prompt = body.prompt;
    const mode = body.context_mode ?? existing.contextMode;
    const threadId = body.thread_id ?? existing.threadId;
    if (body.context_mode) patch.contextMode = body.context_mode;
    if (mode === "reuse_thread") {
      if (!threadId) throw new HttpError(422, "reuse_thread requires thread_id");
      await requireOwnThread(c, threadId);
      patch.threadId = threadId;
    } else {
      patch.threadId = null;
    }
    if (body.schedule_spec || body.timezone) {
      const timezone = body.timezone ?? existing.timezone;
      const { spec, next } = planSchedule(ctx, existing.scheduleType, (body.schedule_spec ?? existing.scheduleSpec) as Record<string, unknown>, timezone);
      patch.scheduleSpec = spec;
      patch.timezone = timezone;
      patch.nextRunAt = next;
      // a finished task given a future slot is armed again (only enabled tasks are ever due)
      if (next !== null && ["completed", "failed", "cancelled"].includes(existing.status)) patch.status = "enabled";
    }
    const updated = await tasks().store.update(existing.id, patch, new Date().toISOString());
    if (!updated) throw new HttpError(409, RUNNING);
    return c.json(taskResponse(updated));
  });

  app.post("/scheduled-tasks/:task_id/pause", async (c) => {
    const existing = await ownTask(c);
    if (existing.status === "running") throw new HttpError(409, RUNNING);
    const updated = await tasks().store.update(existing.id, { status: "paused" }, new Date().toISOString());
    if (!updated) throw new HttpError(409, RUNNING);
    return c.json(taskResponse(updated));
  });

  app.post("/scheduled-tasks/:task_id/resume", async (c) => {
    const existing = await ownTask(c);
    if (existing.status === "running") throw new HttpError(409, RUNNING);
    // the slots that passed while paused are not owed: the next one counts from now
    const next = nextRunAt(existing.scheduleType, existing.scheduleSpec, existing.timezone, Date.now());
    if (next === null) throw new HttpError(422, existing.scheduleType === "once" ? "once schedule is in the past; set a new run_at to resume it" : "schedule has no future slot");
    const updated = await tasks().store.update(existing.id, { status: "enabled", nextRunAt: next }, new Date().toISOString());
    if (!updated) throw new HttpError(409, RUNNING);
    return c.json(taskResponse(updated));
  });

  app.post("/scheduled-tasks/:task_id/trigger", async (c) => {
    const task = await ownTask(c);
    const result = await tasks().service.trigger(task.id);
    if (result.outcome === "conflict") throw new HttpError(409, result.error);
    if (result.outcome === "failed") throw new HttpError(502, result.error || "Scheduled task trigger failed");
    return c.json({ id: task.id, triggered: true });
  });

  app.delete("/scheduled-tasks/:task_id", async (c) => {
    const task = await ownTask(c);
    const outcome = await tasks().store.delete(task.id);
    if (outcome === "not_found") throw new HttpError(404, "Scheduled task not found");
    if (outcome === "executing") throw new HttpError(409, "Scheduled task is already launching or running; retry after the active execution finishes");
    return c.json({ id: task.id, deleted: true });
  });

  app.get("/scheduled-tasks/:task_id/runs", async (c) => {
    const task = await ownTask(c);
    const q = runsQuery.safeParse({ limit: c.req.query("limit"), offset: c.req.query("offset") });
    if (!q.success) throw new HttpError(422, "limit must be 1..200 and offset ≥ 0");
    return c.json((await tasks().store.listRuns(task.id, q.data.limit, q.data.offset)).map(runRowResponse));
  });

  app.get("/threads/:thread_id/scheduled-tasks", async (c) => {
    // the thread-access middleware already answered another user's thread with 404
    const threadId = checkThreadId(threadOf(c).threadId);
    return c.json((await tasks().store.list(userOf(c).id, threadId)).map(taskResponse));
  });
}
