import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { DeleteOutcome, ScheduledTaskStore } from "./store";
import type { NewScheduledTask, RunCompletion, ScheduledTask, ScheduledTaskPatch, ScheduledTaskRun, SlotClaim } from "./types";
import { patchEntries, runFromRow, taskFromRow } from "./rows";
import type { Row } from "./rows";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS gw_scheduled_tasks (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  thread_id TEXT,
  context_mode TEXT NOT NULL,
  assistant_id TEXT NOT NULL,
  title TEXT NOT NULL,
  prompt TEXT NOT NULL,
  schedule_type TEXT NOT NULL,
  schedule_spec TEXT NOT NULL,
  timezone TEXT NOT NULL,
  status TEXT NOT NULL,
  next_run_at TEXT,
  last_run_at TEXT,
  last_run_id TEXT,
  last_thread_id TEXT,
  last_error TEXT,
  run_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  resume_status TEXT
);
CREATE INDEX IF NOT EXISTS gw_scheduled_tasks_user ON gw_scheduled_tasks(user_id, created_at);
CREATE INDEX IF NOT EXISTS gw_scheduled_tasks_due ON gw_scheduled_tasks(next_run_at) WHERE status IN ('enabled', 'running');
CREATE TABLE IF NOT EXISTS gw_scheduled_task_runs (
  id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  run_id TEXT,
  scheduled_for TEXT NOT NULL,
  trigger_kind TEXT NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  started_at TEXT,
  finished_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS gw_scheduled_task_runs_task ON gw_scheduled_task_runs(task_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS gw_scheduled_task_runs_slot ON gw_scheduled_task_runs(task_id, scheduled_for) WHERE trigger_kind = 'scheduled';
`;

/**
 * Scheduled tasks in `gateway.db` (on a connection of their own). Several
 * processes may open the same file: a claim is one `IMMEDIATE` transaction
 * whose compare-and-set `UPDATE` decides who wins, and the unique index on
 * (task, slot) refuses a second history row for a slot whatever happens.
 */
export class SqliteScheduledTaskStore implements ScheduledTaskStore {
  private readonly db: Database.Database;
  /** Order of history rows (insertion order within one millisecond too). */
  private seq = 0;

  constructor(file: string) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
  }

  private nextSeq(): number {
    const row = this.db.prepare("SELECT COALESCE(MAX(seq), 0) AS m FROM gw_scheduled_task_runs").get() as { m: number };
    this.seq = Math.max(this.seq, row.m) + 1;
    return this.seq;
  }

  private insertRun(run: ScheduledTaskRun): void {
    this.db
      .prepare(
        `INSERT INTO gw_scheduled_task_runs (id, seq, task_id, thread_id, run_id, scheduled_for, trigger_kind, status, error, started_at, finished_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(run.id, this.nextSeq(), run.taskId, run.threadId, run.runId, run.scheduledFor, run.trigger, run.status, run.error, run.startedAt, run.finishedAt, run.createdAt);
  }

  async create(t: NewScheduledTask): Promise<ScheduledTask> {
    this.db
      .prepare(
        `INSERT INTO gw_scheduled_tasks (id, user_id, thread_id, context_mode, assistant_id, title, prompt, schedule_type, schedule_spec, timezone, status, next_run_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'enabled', ?, ?, ?)`,
      )
      .run(t.id, t.userId, t.threadId, t.contextMode, t.assistantId, t.title, t.prompt, t.scheduleType, JSON.stringify(t.scheduleSpec), t.timezone, t.nextRunAt, t.createdAt, t.createdAt);
    return (await this.get(t.id))!;
  }

  async get(id: string): Promise<ScheduledTask | undefined> {
    const row = this.db.prepare("SELECT * FROM gw_scheduled_tasks WHERE id = ?").get(id) as Row | undefined;
    return row ? taskFromRow(row) : undefined;
  }

  async list(userId: string, threadId?: string): Promise<ScheduledTask[]> {
    const rows = (
      threadId === undefined
        ? this.db.prepare("SELECT * FROM gw_scheduled_tasks WHERE user_id = ? ORDER BY created_at DESC, id DESC").all(userId)
        : this.db.prepare("SELECT * FROM gw_scheduled_tasks WHERE user_id = ? AND (thread_id = ? OR last_thread_id = ?) ORDER BY created_at DESC, id DESC").all(userId, threadId, threadId)
    ) as Row[];
    return rows.map(taskFromRow);
  }

  async update(id: string, patch: ScheduledTaskPatch, updatedAt: string): Promise<ScheduledTask | undefined> {
    const entries = patchEntries(patch as Record<string, unknown>);
    const sets = [...entries.map(([c]) => `${c} = ?`), "updated_at = ?"].join(", ");
    const res = this.db.prepare(`UPDATE gw_scheduled_tasks SET ${sets} WHERE id = ? AND status != 'running'`).run(...entries.map(([, v]) => v), updatedAt, id);
    return res.changes ? this.get(id) : undefined;
  }

  async delete(id: string): Promise<DeleteOutcome> {
    return this.db
      .transaction((): DeleteOutcome => {
        const row = this.db.prepare("SELECT status FROM gw_scheduled_tasks WHERE id = ?").get(id) as { status: string } | undefined;
        if (!row) return "not_found";
        if (row.status === "running") return "executing";
        this.db.prepare("DELETE FROM gw_scheduled_task_runs WHERE task_id = ?").run(id);
        this.db.prepare("DELETE FROM gw_scheduled_tasks WHERE id = ?").run(id);
        return "deleted";
      })
      .immediate();
  }

  async due(now: string, limit: number): Promise<ScheduledTask[]> {
    const rows = this.db
      .prepare("SELECT * FROM gw_scheduled_tasks WHERE status IN ('enabled', 'running') AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ?")
      .all(now, limit) as Row[];
    return rows.map(taskFromRow);
  }

  async claim(c: SlotClaim): Promise<boolean> {
    const statuses = c.expectedStatuses.map(() => "?").join(", ");
    try {
      return this.db
        .transaction((): boolean => {
          const guard = c.expectedNextRunAt === null ? "" : " AND next_run_at = ?";
          const lease = c.lease ? ", lease_owner = ?, lease_until = ?, resume_status = ?" : "";
          const lastError = c.lastError !== undefined ? ", last_error = ?" : "";
          const params: unknown[] = [c.nextRunAt, c.status, c.updatedAt];
          if (c.lease) params.push(c.lease.owner, c.lease.until, c.lease.resumeStatus);
          if (c.lastError !== undefined) params.push(c.lastError);
          params.push(c.taskId, ...c.expectedStatuses);
          if (c.expectedNextRunAt !== null) params.push(c.expectedNextRunAt);
          const res = this.db
            .prepare(`UPDATE gw_scheduled_tasks SET next_run_at = ?, status = ?, updated_at = ?${lease}${lastError} WHERE id = ? AND status IN (${statuses})${guard}`)
            .run(...params);
          if (res.changes !== 1) return false;
          for (const run of c.runs) this.insertRun(run);
          return true;
        })
        .immediate();
    } catch (err) {
      // the unique (task, slot) index: another process recorded this slot already
      if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") return false;
      throw err;
    }
  }

  async renewLease(taskId: string, owner: string, until: number): Promise<boolean> {
    return this.db.prepare("UPDATE gw_scheduled_tasks SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'running'").run(until, taskId, owner).changes === 1;
  }

  async markStarted(runRowId: string, runId: string, threadId: string, startedAt: string): Promise<void> {
    this.db.prepare("UPDATE gw_scheduled_task_runs SET run_id = ?, thread_id = ?, status = 'running', started_at = ? WHERE id = ? AND status = 'queued'").run(runId, threadId, startedAt, runRowId);
  }

  async complete(c: RunCompletion): Promise<boolean> {
    return this.db
      .transaction((): boolean => {
        const res = this.db
          .prepare(
            `UPDATE gw_scheduled_tasks SET status = ?, lease_owner = NULL, lease_until = NULL, resume_status = NULL, last_run_at = ?, last_run_id = ?,
               last_thread_id = ?, last_error = ?, run_count = run_count + 1, updated_at = ? WHERE id = ? AND lease_owner = ? AND status = 'running'`,
          )
          .run(c.taskStatus, c.finishedAt, c.runId, c.threadId, c.error, c.finishedAt, c.taskId, c.owner);
        if (res.changes !== 1) return false;
        this.db
          .prepare("UPDATE gw_scheduled_task_runs SET status = ?, error = ?, run_id = COALESCE(?, run_id), thread_id = ?, finished_at = ? WHERE id = ?")
          .run(c.status, c.error, c.runId, c.threadId, c.finishedAt, c.runRowId);
        return true;
      })
      .immediate();
  }

  async expired(nowMs: number, limit: number): Promise<ScheduledTask[]> {
    const rows = this.db.prepare("SELECT * FROM gw_scheduled_tasks WHERE status = 'running' AND lease_until < ? ORDER BY lease_until LIMIT ?").all(nowMs, limit) as Row[];
    return rows.map(taskFromRow);
  }

  async recover(taskId: string, staleOwner: string, nowMs: number, now: string): Promise<boolean> {
    return this.db
      .transaction((): boolean => {
        const res = this.db
          .prepare(
            `UPDATE gw_scheduled_tasks SET status = COALESCE(resume_status, 'enabled'), lease_owner = NULL, lease_until = NULL, resume_status = NULL,
               last_error = 'the process running this task stopped before its run ended', updated_at = ?
             WHERE id = ? AND status = 'running' AND lease_owner = ? AND lease_until < ?`,
          )
          .run(now, taskId, staleOwner, nowMs);
        if (res.changes !== 1) return false;
        this.db
          .prepare("UPDATE gw_scheduled_task_runs SET status = 'interrupted', error = 'the process running it stopped', finished_at = ? WHERE task_id = ? AND status IN ('queued', 'running')")
          .run(now, taskId);
        return true;
      })
      .immediate();
  }

  async listRuns(taskId: string, limit: number, offset: number): Promise<ScheduledTaskRun[]> {
    const rows = this.db.prepare("SELECT * FROM gw_scheduled_task_runs WHERE task_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?").all(taskId, limit, offset) as Row[];
    return rows.map(runFromRow);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
