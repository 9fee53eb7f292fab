import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { batcherFor, deferredStep } from "../sqlite";
import type { WriteBatcher, WriteStep } from "../sqlite";
import { compareThreads, matchesMetadata } from "./ordering";
import type {
  MessageRow,
  MessageStore,
  PersistenceStores,
  RunRecord,
  RunStore,
  ThreadRecord,
  ThreadSearch,
  ThreadStore,
} from "./types";
import { parseJson, runFromRow, threadFromRow } from "./rows";
import type { Row } from "./rows";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS gw_threads (
  thread_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  status TEXT NOT NULL,
  metadata TEXT NOT NULL,
  display_name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gw_runs (
  run_id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  assistant_id TEXT NOT NULL,
  status TEXT NOT NULL,
  metadata TEXT NOT NULL,
  kwargs TEXT NOT NULL,
  multitask_strategy TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  usage TEXT NOT NULL,
  stop_reason TEXT,
  error TEXT,
  model_name TEXT,
  execution TEXT
);
CREATE INDEX IF NOT EXISTS gw_runs_thread ON gw_runs(thread_id, created_at);
CREATE TABLE IF NOT EXISTS gw_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  thread_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  message_type TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE(thread_id, message_id)
);
`;

/** A patchable record field: its column and whether it is stored as JSON. */
type ColumnSpec = Record<string, { column: string; json?: boolean }>;

/** Thread fields `update()` may change. */
const THREAD_COLUMNS: ColumnSpec = {
  userId: { column: "user_id" },
  status: { column: "status" },
  metadata: { column: "metadata", json: true },
  displayName: { column: "display_name" },
  updatedAt: { column: "updated_at" },
};

/** Run fields `update()` may change (identity, owner and strategy are fixed at creation). */
const RUN_COLUMNS: ColumnSpec = {
  status: { column: "status" },
  metadata: { column: "metadata", json: true },
  kwargs: { column: "kwargs", json: true },
  updatedAt: { column: "updated_at" },
  usage: { column: "usage", json: true },
  stopReason: { column: "stop_reason" },
  error: { column: "error" },
  modelName: { column: "model_name" },
  execution: { column: "execution", json: true },
};

/**
 * `UPDATE table SET <patched columns> WHERE key = ?` with its values, in a
 * fixed column order (so statements are cached per set of fields). Fields
 * that are `undefined` or not updatable are left alone; `sql` is empty when
 * nothing is to be written.
 */
function patchStatement(
  table: string,
  columns: ColumnSpec,
  patch: Record<string, unknown>,
  keyColumn: string,
  key: string,
): { sql: string; values: unknown[] } {
  const sets: string[] = [];
  const values: unknown[] = [];
  for (const field in columns) {
    const value = patch[field];
    if (value === undefined) continue;
    const spec = columns[field];
    sets.push(`${spec.column}=?`);
    values.push(spec.json ? JSON.stringify(value) : value);
  }
  if (!sets.length) return { sql: "", values };
  values.push(key);
  return { sql: `UPDATE ${table} SET ${sets.join(", ")} WHERE ${keyColumn}=?`, values };
}

/** Prepared statements, compiled once per SQL text, and batched writes. */
abstract class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();
  private readonly batcher: WriteBatcher;

  /** The tables must exist: use {@link openSqliteStores} or {@link ensureSqliteSchema} first. */
  constructor(protected readonly db: Database.Database) {
    this.batcher = batcherFor(db);
  }

  /** Queue a write (committed with the other writes queued meanwhile); `keys` name the rows it touches. */
  protected write(sql: string, params: WriteStep["params"], keys?: string[]): Promise<void> {
    return this.batcher.write({ sql, params }, keys);
  }

  /** Queue a write of several statements that succeed or fail together. */
  protected writeAll(steps: WriteStep[], keys?: string[]): Promise<void> {
    return this.batcher.write(steps, keys);
  }

  /** Before reading `key`: commit the pending writes that touch it and wait for them (so the read sees them). */
  protected settle(key: string): Promise<void> {
    return this.batcher.settle(key);
  }

  protected stmt(sql: string): Database.Statement {
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }
}

/** {@link ThreadStore} over the `gw_threads` table. */
export class SqliteThreadStore extends StatementCache implements ThreadStore {
  async create(t: ThreadRecord): Promise<void> {
    return this.write(
      `INSERT INTO gw_threads(thread_id,user_id,status,metadata,display_name,created_at,updated_at) VALUES (?,?,?,?,?,?,?)`,
      () => [t.threadId, t.userId, t.status, JSON.stringify(t.metadata), t.displayName, t.createdAt, t.updatedAt],
      [`thread:${t.threadId}`, "threads-any"],
    );
  }

  async get(threadId: string): Promise<ThreadRecord | undefined> {
    await this.settle(`thread:${threadId}`);
    const r = this.stmt(`SELECT * FROM gw_threads WHERE thread_id = ?`).get(threadId) as Row | undefined;
    return r ? threadFromRow(r) : undefined;
  }

  /**
   * Patch the given fields (a missing thread is a no-op). Only the patched
   * columns are written, without reading the row first, so the write joins
   * the current batch instead of forcing a commit.
   */
  async update(threadId: string, patch: Partial<Omit<ThreadRecord, "threadId" | "createdAt">>): Promise<void> {
    const { sql, values } = patchStatement("gw_threads", THREAD_COLUMNS, patch, "thread_id", threadId);
    if (!sql) return;
    return this.write(sql, values, [`thread:${threadId}`, "threads-any"]);
  }

  async delete(threadId: string): Promise<void> {
    return this.write(`DELETE FROM gw_threads WHERE thread_id = ?`, [threadId], [`thread:${threadId}`, "threads-any"]);
  }

  async search(f: ThreadSearch): Promise<ThreadRecord[]> {
    await this.settle("threads-any");
    const rows = (this.stmt(`SELECT * FROM gw_threads WHERE user_id = ?`).all(f.userId) as Row[]).map(threadFromRow);
    const filtered = rows.filter((t) => (!f.status || t.status === f.status) && matchesMetadata(t.metadata, f.metadata));
    filtered.sort(compareThreads);
    return filtered.slice(f.offset, f.offset + f.limit);
  }

  async listRunning(): Promise<ThreadRecord[]> {
    await this.settle("threads-any");
    return (this.stmt(`SELECT * FROM gw_threads WHERE status = 'running'`).all() as Row[]).map(threadFromRow);
  }
}

/** {@link RunStore} over the `gw_runs` table. */
export class SqliteRunStore extends StatementCache implements RunStore {
  async create(r: RunRecord): Promise<void> {
    return this.write(
      `INSERT INTO gw_runs(run_id,thread_id,user_id,assistant_id,status,metadata,kwargs,multitask_strategy,created_at,updated_at,usage,stop_reason,error,model_name,execution)
         VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      // Serialised when the batch commits (a record is not changed after it is handed in).
      () => [
        r.runId,
        r.threadId,
        r.userId,
        r.assistantId,
        r.status,
        JSON.stringify(r.metadata),
        JSON.stringify(r.kwargs),
        r.multitaskStrategy,
        r.createdAt,
        r.updatedAt,
        JSON.stringify(r.usage),
        r.stopReason,
        r.error,
        r.modelName,
        r.execution ? JSON.stringify(r.execution) : null,
      ],
      [`run:${r.runId}`, "runs-any"],
    );
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    await this.settle(`run:${runId}`);
    const r = this.stmt(`SELECT * FROM gw_runs WHERE run_id = ?`).get(runId) as Row | undefined;
    return r ? runFromRow(r) : undefined;
  }

  /**
   * Patch the given fields (a missing run is a no-op). Only the patched
   * columns are written, without reading the row first, so the write joins
   * the current batch instead of forcing a commit.
   */
  async update(runId: string, patch: Partial<Omit<RunRecord, "runId" | "threadId" | "createdAt">>): Promise<void> {
    const { sql, values } = patchStatement("gw_runs", RUN_COLUMNS, patch, "run_id", runId);
    if (!sql) return;
    return this.write(sql, values, [`run:${runId}`, "runs-any"]);
  }

  async listByThread(threadId: string): Promise<RunRecord[]> {
    await this.settle("runs-any");
    return (
      this.stmt(`SELECT * FROM gw_runs WHERE thread_id = ? ORDER BY created_at DESC, rowid DESC`).all(threadId) as Row[]
    ).map(runFromRow);
  }

  async deleteByThread(threadId: string): Promise<void> {
    return this.write(`DELETE FROM gw_runs WHERE thread_id = ?`, [threadId], ["*"]);
  }

  async recoverOrphans(now: string): Promise<RunRecord[]> {
    await this.settle("runs-any");
    const rows = (this.stmt(`SELECT * FROM gw_runs WHERE status IN ('pending','running')`).all() as Row[]).map(runFromRow);
    if (rows.length) {
      const sql = `UPDATE gw_runs SET status='error', stop_reason='orphan_recovered', error=?, updated_at=? WHERE run_id=?`;
      await this.writeAll(
        rows.map((r) => ({ sql, params: ["The server stopped while this run was in progress", now, r.runId] })),
        ["runs-any", ...rows.map((r) => `run:${r.runId}`)],
      );
    }
    return rows.map((r) => ({ ...r, status: "error", stopReason: "orphan_recovered", updatedAt: now }));
  }
}

/** {@link MessageStore} over the `gw_messages` table. */
export class SqliteMessageStore extends StatementCache implements MessageStore {
  async record(threadId: string, runId: string, messages: Array<Record<string, unknown>>, createdAt: string): Promise<void> {
    // One statement per message: a message already in the transcript (same id) keeps its row, run and
    // position and gets the new content.
    const sql = `INSERT INTO gw_messages(thread_id,run_id,message_id,message_type,content,created_at) VALUES (?,?,?,?,?,?)
       ON CONFLICT(thread_id, message_id) DO UPDATE SET content = excluded.content`;
    const steps: WriteStep[] = [];
    for (const m of messages) {
      if (typeof m.id === "string" && m.id) {
        const id = m.id;
        steps.push(deferredStep(sql, () => [threadId, runId, id, String(m.type ?? "unknown"), JSON.stringify(m), createdAt]));
      }
    }
    if (!steps.length) return;
    return this.writeAll(steps, [`messages:${threadId}`]);
  }

  async page(threadId: string, options: { limit: number; beforeSeq?: number }): Promise<{ rows: MessageRow[]; hasMore: boolean }> {
    await this.settle(`messages:${threadId}`);
    const before = options.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows = this.stmt(`SELECT * FROM gw_messages WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
      .all(threadId, before, options.limit + 1) as Row[];
    const hasMore = rows.length > options.limit;
    const out = rows.slice(0, options.limit).reverse().map(
      (r): MessageRow => ({
        seq: r.seq as number,
        threadId: r.thread_id as string,
        runId: r.run_id as string,
        messageId: r.message_id as string,
        messageType: r.message_type as string,
        content: parseJson(r.content, {}),
        createdAt: r.created_at as string,
      }),
    );
    return { rows: out, hasMore };
  }

  async runIds(threadId: string): Promise<Map<string, string>> {
    await this.settle(`messages:${threadId}`);
    const rows = this.stmt(`SELECT message_id, run_id FROM gw_messages WHERE thread_id = ?`).all(threadId) as Row[];
    return new Map(rows.map((r) => [r.message_id as string, r.run_id as string]));
  }

  async deleteByThread(threadId: string): Promise<void> {
    return this.write(`DELETE FROM gw_messages WHERE thread_id = ?`, [threadId], [`messages:${threadId}`]);
  }
}

/** Create the `gw_threads`, `gw_runs` and `gw_messages` tables when missing. */
export function ensureSqliteSchema(db: Database.Database): void {
  db.exec(SCHEMA);
  // Databases made before runs kept their execution settings get the column (NULL for their runs).
  const columns = db.prepare(`PRAGMA table_info(gw_runs)`).all() as Array<{ name: string }>;
  if (!columns.some((c) => c.name === "execution")) db.exec(`ALTER TABLE gw_runs ADD COLUMN execution TEXT`);
}

/**
 * Open (or create) the gateway tables in a SQLite database. `target` is a
 * file path, `":memory:"`, or an already open database (e.g. the one the
 * checkpoint store uses). Only a database opened here is closed by `close()`.
 */
export function openSqliteStores(target: string | Database.Database): PersistenceStores {
  let db: Database.Database;
  let owned = false;
  if (typeof target === "string") {
    if (target !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    db = new Database(target);
    owned = true;
  } else {
    db = target;
  }
  db.pragma("journal_mode = WAL");
  // Atomic commits without an fsync per commit (a power loss may drop the last commits, never corrupts).
  if (owned) db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  ensureSqliteSchema(db);
  return {
    threads: new SqliteThreadStore(db),
    runs: new SqliteRunStore(db),
    messages: new SqliteMessageStore(db),
    async close() {
      await batcherFor(db).close();
      if (owned && db.open) db.close();
    },
  };
}
