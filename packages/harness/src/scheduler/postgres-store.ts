import type pg from "pg";
import type { Migration } from "../postgres/migrate";
import { runMigrations } from "../postgres/migrate";
import { pgText } from "../postgres/statements";
import type { DeleteOutcome, ScheduledTaskStore } from "./store";
import type { NewScheduledTask, RunCompletion, ScheduledTask, ScheduledTaskPatch, ScheduledTaskRun, SlotClaim } from "./types";
import { patchEntries, runFromRow, taskFromRow } from "./rows";
import type { Row } from "./rows";

/** The migration component of the scheduler's tables. */
export const SCHEDULER_COMPONENT = "scheduler";

/** Tables of scheduled tasks and their history on PostgreSQL (times compared as text are ISO-8601 UTC, "C" collation). */
export const SCHEDULER_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "scheduled_tasks",
    up: `
      CREATE TABLE deerflow_scheduled_tasks (
        id TEXT COLLATE "C" PRIMARY KEY,
        user_id TEXT COLLATE "C" NOT NULL,
        thread_id TEXT COLLATE "C",
        context_mode TEXT NOT NULL,
        assistant_id TEXT NOT NULL,
        title TEXT NOT NULL,
        prompt TEXT NOT NULL,
        schedule_type TEXT NOT NULL,
        schedule_spec TEXT NOT NULL,
        timezone TEXT NOT NULL,
        status TEXT NOT NULL,
        next_run_at TEXT COLLATE "C",
        last_run_at TEXT,
        last_run_id TEXT,
        last_thread_id TEXT COLLATE "C",
        last_error TEXT,
        run_count INTEGER NOT NULL DEFAULT 0,
        created_at TEXT COLLATE "C" NOT NULL,
        updated_at TEXT NOT NULL,
        lease_owner TEXT,
        lease_until BIGINT,
        resume_status TEXT
      );
      CREATE INDEX deerflow_scheduled_tasks_user ON deerflow_scheduled_tasks (user_id, created_at);
      CREATE INDEX deerflow_scheduled_tasks_due ON deerflow_scheduled_tasks (next_run_at) WHERE status IN ('enabled', 'running');
      CREATE TABLE deerflow_scheduled_task_runs (
        id TEXT COLLATE "C" PRIMARY KEY,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        task_id TEXT COLLATE "C" NOT NULL,
        thread_id TEXT NOT NULL,
        run_id TEXT,
        scheduled_for TEXT COLLATE "C" NOT NULL,
        trigger_kind TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        started_at TEXT,
        finished_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX deerflow_scheduled_task_runs_task ON deerflow_scheduled_task_runs (task_id, seq);
      CREATE UNIQUE INDEX deerflow_scheduled_task_runs_slot ON deerflow_scheduled_task_runs (task_id, scheduled_for) WHERE trigger_kind = 'scheduled';
    `,
  },
];

/**
 * Scheduled tasks on PostgreSQL, shared by every process on the database.
 * A claim is one transaction: the compare-and-set `UPDATE` of the task row
 * (row-locked until commit, so a competing claim waits and then finds the
 * slot moved on) and the history rows it writes. Tables are migrated on first use.
 */
export class PostgresScheduledTaskStore implements ScheduledTaskStore {
  private ready?: Promise<pg.Pool>;

  constructor(private readonly pool: pg.Pool) {}

  private db(): Promise<pg.Pool> {
    this.ready ??= runMigrations(this.pool, SCHEDULER_COMPONENT, SCHEDULER_MIGRATIONS).then(
      () => this.pool,
      (err: unknown) => {
        this.ready = undefined;
        throw err;
      },
    );
    return this.ready;
  }

  /** Run `fn` in one transaction on one connection. */
  private async tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await (await this.db()).connect();
    try {
      await client.query("BEGIN");
      const out = await fn(client);
      await client.query("COMMIT");
      return out;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async create(t: NewScheduledTask): Promise<ScheduledTask> {
    const res = await (await this.db()).query(
      `INSERT INTO deerflow_scheduled_tasks (id, user_id, thread_id, context_mode, assistant_id, title, prompt, schedule_type, schedule_spec, timezone, status, next_run_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'enabled', $11, $12, $12) RETURNING *`,
      [t.id, t.userId, t.threadId, t.contextMode, t.assistantId, pgText(t.title), pgText(t.prompt), t.scheduleType, pgText(JSON.stringify(t.scheduleSpec)), t.timezone, t.nextRunAt, t.createdAt],
    );
    return taskFromRow(res.rows[0] as Row);
  }

  async get(id: string): Promise<ScheduledTask | undefined> {
    const res = await (await this.db()).query("SELECT * FROM deerflow_scheduled_tasks WHERE id = $1", [id]);
    return res.rows[0] ? taskFromRow(res.rows[0] as Row) : undefined;
  }

  async list(userId: string, threadId?: string): Promise<ScheduledTask[]> {
    const db = await this.db();
    const res =
      threadId === undefined
        ? await db.query("SELECT * FROM deerflow_scheduled_tasks WHERE user_id = $1 ORDER BY created_at DESC, id DESC", [userId])
        : await db.query("SELECT * FROM deerflow_scheduled_tasks WHERE user_id = $1 AND (thread_id = $2 OR last_thread_id = $2) ORDER BY created_at DESC, id DESC", [userId, threadId]);
    return res.rows.map((r) => taskFromRow(r as Row));
  }

  async update(id: string, patch: ScheduledTaskPatch, updatedAt: string): Promise<ScheduledTask | undefined> {
    const entries = patchEntries(patch as Record<string, unknown>);
    const sets = [...entries.map(([c], i) => `${c} = $${i + 1}`), `updated_at = $${entries.length + 1}`].join(", ");
    const values = [...entries.map(([, v]) => (typeof v === "string" ? pgText(v) : v)), updatedAt, id];
    const res = await (await this.db()).query(`UPDATE deerflow_scheduled_tasks SET ${sets} WHERE id = $${entries.length + 2} AND status != 'running' RETURNING *`, values);
    return res.rows[0] ? taskFromRow(res.rows[0] as Row) : undefined;
  }

  async delete(id: string): Promise<DeleteOutcome> {
    return this.tx(async (client) => {
      const row = (await client.query<{ status: string }>("SELECT status FROM deerflow_scheduled_tasks WHERE id = $1 FOR UPDATE", [id])).rows[0];
      if (!row) return "not_found";
      if (row.status === "running") return "executing";
      await client.query("DELETE FROM deerflow_scheduled_task_runs WHERE task_id = $1", [id]);
      await client.query("DELETE FROM deerflow_scheduled_tasks WHERE id = $1", [id]);
      return "deleted";
    });
  }

  async due(now: string, limit: number): Promise<ScheduledTask[]> {
    const res = await (await this.db()).query(
      "SELECT * FROM deerflow_scheduled_tasks WHERE status IN ('enabled', 'running') AND next_run_at IS NOT NULL AND next_run_at <= $1 ORDER BY next_run_at LIMIT $2",
      [now, limit],
    );
    return res.rows.map((r) => taskFromRow(r as Row));
  }

  async claim(c: SlotClaim): Promise<boolean> {
    try {
      return await this.tx(async (client) => {
        const params: unknown[] = [c.nextRunAt, c.status, c.updatedAt];
        let sets = "next_run_at = $1, status = $2, updated_at = $3";
        if (c.lease) {
          params.push(c.lease.owner, c.lease.until, c.lease.resumeStatus);
          sets += `, lease_owner = $${params.length - 2}, lease_until = $${params.length - 1}, resume_status = $${params.length}`;
        }
        if (c.lastError !== undefined) {
          params.push(c.lastError === null ? null : pgText(c.lastError));
          sets += `, last_error = $${params.length}`;
        }
        params.push(c.taskId);
        let where = `id = $${params.length}`;
        params.push([...c.expectedStatuses]);
        where += ` AND status = ANY($${params.length}::text[])`;
        if (c.expectedNextRunAt !== null) {
          params.push(c.expectedNextRunAt);
          where += ` AND next_run_at = $${params.length}`;
        }
        const res = await client.query(`UPDATE deerflow_scheduled_tasks SET ${sets} WHERE ${where}`, params);
        if (res.rowCount !== 1) return false;
        for (const run of c.runs) await insertRun(client, run);
        return true;
      });
    } catch (err) {
      // unique_violation on (task, slot): another process recorded this slot already
      if ((err as { code?: string }).code === "23505") return false;
      throw err;
    }
  }

  async renewLease(taskId: string, owner: string, until: number): Promise<boolean> {
    const res = await (await this.db()).query("UPDATE deerflow_scheduled_tasks SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = 'running'", [until, taskId, owner]);
    return res.rowCount === 1;
  }

  async markStarted(runRowId: string, runId: string, threadId: string, startedAt: string): Promise<void> {
    await (await this.db()).query("UPDATE deerflow_scheduled_task_runs SET run_id = $1, thread_id = $2, status = 'running', started_at = $3 WHERE id = $4 AND status = 'queued'", [
      runId,
      threadId,
      startedAt,
      runRowId,
    ]);
  }

  async complete(c: RunCompletion): Promise<boolean> {
    return this.tx(async (client) => {
      const res = await client.query(
        `UPDATE deerflow_scheduled_tasks SET status = $1, lease_owner = NULL, lease_until = NULL, resume_status = NULL, last_run_at = $2, last_run_id = $3,
           last_thread_id = $4, last_error = $5, run_count = run_count + 1, updated_at = $2 WHERE id = $6 AND lease_owner = $7 AND status = 'running'`,
        [c.taskStatus, c.finishedAt, c.runId, c.threadId, c.error === null ? null : pgText(c.error), c.taskId, c.owner],
      );
      if (res.rowCount !== 1) return false;
      await client.query("UPDATE deerflow_scheduled_task_runs SET status = $1, error = $2, run_id = COALESCE($3, run_id), thread_id = $4, finished_at = $5 WHERE id = $6", [
        c.status,
        c.error === null ? null : pgText(c.error),
        c.runId,
        c.threadId,
        c.finishedAt,
        c.runRowId,
      ]);
      return true;
    });
  }

  async expired(nowMs: number, limit: number): Promise<ScheduledTask[]> {
    const res = await (await this.db()).query("SELECT * FROM deerflow_scheduled_tasks WHERE status = 'running' AND lease_until < $1 ORDER BY lease_until LIMIT $2", [nowMs, limit]);
    return res.rows.map((r) => taskFromRow(r as Row));
  }

  async recover(taskId: string, staleOwner: string, nowMs: number, now: string): Promise<boolean> {
    return this.tx(async (client) => {
      const res = await client.query(
        `UPDATE deerflow_scheduled_tasks SET status = COALESCE(resume_status, 'enabled'), lease_owner = NULL, lease_until = NULL, resume_status = NULL,
           last_error = 'the process running this task stopped before its run ended', updated_at = $1
         WHERE id = $2 AND status = 'running' AND lease_owner = $3 AND lease_until < $4`,
        [now, taskId, staleOwner, nowMs],
      );
      if (res.rowCount !== 1) return false;
      await client.query("UPDATE deerflow_scheduled_task_runs SET status = 'interrupted', error = 'the process running it stopped', finished_at = $1 WHERE task_id = $2 AND status IN ('queued', 'running')", [now, taskId]);
      return true;
    });
  }

  async listRuns(taskId: string, limit: number, offset: number): Promise<ScheduledTaskRun[]> {
    const res = await (await this.db()).query("SELECT * FROM deerflow_scheduled_task_runs WHERE task_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3", [taskId, limit, offset]);
    return res.rows.map((r) => runFromRow(r as Row));
  }

  /** The pool belongs to whoever opened it (the runtime's storage): nothing to release here. */
  async close(): Promise<void> {}
}

async function insertRun(client: pg.PoolClient, run: ScheduledTaskRun): Promise<void> {
  await client.query(
    `INSERT INTO deerflow_scheduled_task_runs (id, task_id, thread_id, run_id, scheduled_for, trigger_kind, status, error, started_at, finished_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [run.id, run.taskId, run.threadId, run.runId, run.scheduledFor, run.trigger, run.status, run.error === null ? null : pgText(run.error), run.startedAt, run.finishedAt, run.createdAt],
  );
}
