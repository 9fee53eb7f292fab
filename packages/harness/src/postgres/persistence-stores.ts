import type pg from "pg";
import { RunServiceError } from "../errors";
import type {
  MessageRow,
  MessageStore,
  RunRecord,
  RunStore,
  RunWriteFence,
  ThreadRecord,
  ThreadSearch,
  ThreadStore,
} from "../persistence/types";
import { parseJson, runFromRow, threadFromRow } from "../persistence/rows";
import type { Row } from "../persistence/rows";
import { RowWriteQueues } from "./row-writes";
import { int8, jsonbText, pgText, prepared } from "./statements";

const THREAD_COLS = "thread_id, user_id, status, metadata, display_name, created_at, updated_at";
const RUN_COLS =
  "run_id, thread_id, user_id, assistant_id, status, metadata, kwargs, multitask_strategy, created_at, updated_at, usage, stop_reason, error, model_name, execution";

/** A patchable field: its column and how its value is encoded. */
type ColumnSpec = Record<string, { column: string; encode?: "json" | "jsonb" }>;

const THREAD_COLUMNS: ColumnSpec = {
  userId: { column: "user_id" },
  status: { column: "status" },
  metadata: { column: "metadata", encode: "jsonb" },
  displayName: { column: "display_name" },
  updatedAt: { column: "updated_at" },
};

const RUN_COLUMNS: ColumnSpec = {
  status: { column: "status" },
  metadata: { column: "metadata", encode: "json" },
  kwargs: { column: "kwargs", encode: "json" },
  updatedAt: { column: "updated_at" },
  usage: { column: "usage", encode: "json" },
  stopReason: { column: "stop_reason" },
  error: { column: "error" },
  modelName: { column: "model_name" },
  execution: { column: "execution", encode: "json" },
};

/** True when `patch` sets at least one of `columns` (otherwise an update writes nothing). */
function patchesAny(columns: ColumnSpec, patch: Record<string, unknown>): boolean {
  for (const field in columns) if (patch[field] !== undefined) return true;
  return false;
}

/**
 * `UPDATE … SET <patched columns> WHERE key = $n` in a fixed column order
 * (one prepared statement per set of fields), without reading the row first;
 * undefined when nothing is to be written.
 */
function patchQuery(table: string, columns: ColumnSpec, patch: Record<string, unknown>, keyColumn: string, key: string, fence?: RunWriteFence): pg.QueryConfig | undefined {
  const sets: string[] = [];
  const values: unknown[] = [];
  for (const field in columns) {
    const value = patch[field];
    if (value === undefined) continue;
    const spec = columns[field];
    values.push(spec.encode === "jsonb" ? jsonbText(value) : spec.encode ? JSON.stringify(value) : typeof value === "string" ? pgText(value) : value);
    sets.push(`${spec.column} = $${values.length}${spec.encode === "jsonb" ? "::jsonb" : ""}`);
  }
  if (!sets.length) return undefined;
  values.push(key);
  let where = `${keyColumn} = $${values.length}`;
  if (fence) {
    values.push(fence.epoch);
    where += ` AND ${RUN_FENCE_SQL.replace("$RUN", `$${values.length - 1}`).replace("$EPOCH", `$${values.length}`)}`;
  }
  return prepared(`UPDATE ${table} SET ${sets.join(", ")} WHERE ${where}`, values);
}

// A fenced record write (a run's owner writing under its lease claim) goes in only while the run's lease still has
// that claim's epoch, checked in the same statement: FOR SHARE holds the lease row until the update commits, so a
// takeover's claim (which gives the row a new epoch) either committed before (the write is refused) or waits until
// after (the write was the owner's). The owner gives its lease back only after its last fenced write.
const RUN_FENCE_SQL = `EXISTS (SELECT 1 FROM deerflow_run_leases WHERE run_id = $RUN::text AND epoch = $EPOCH::bigint FOR SHARE)`;
const RUN_FENCE_CHECK_SQL = `SELECT r.run_id, l.epoch FROM deerflow_runs r LEFT JOIN deerflow_run_leases l ON l.run_id = r.run_id WHERE r.run_id = $1`;

/**
 * {@link ThreadStore} over `deerflow_threads`. Writes of one thread go out in
 * order and reads see the writes handed in before them ({@link RowWriteQueues}).
 */
export class PostgresThreadStore implements ThreadStore {
  private readonly writes = new RowWriteQueues();

  constructor(private readonly pool: pg.Pool) {}

  /** Settles once every write handed in so far did (before the pool closes). */
  settled(): Promise<void> {
    return this.writes.allSettled() ?? Promise.resolve();
  }

  create(t: ThreadRecord): Promise<void> {
    return this.writes.write(`t:${t.threadId}`, () => this.pool.query(
      prepared(`INSERT INTO deerflow_threads (${THREAD_COLS}) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7)`, [
        t.threadId,
        pgText(t.userId),
        pgText(t.status),
        jsonbText(t.metadata),
        pgText(t.displayName),
        t.createdAt,
        t.updatedAt,
      ]),
    ));
  }

  async get(threadId: string): Promise<ThreadRecord | undefined> {
    await this.writes.settled(`t:${threadId}`);
    const res = await this.pool.query(prepared(`SELECT ${THREAD_COLS} FROM deerflow_threads WHERE thread_id = $1`, [threadId]));
    return res.rows[0] ? threadFromRow(res.rows[0]) : undefined;
  }

  /** Patches of one thread handed in together, or while one is in flight, go out as one `UPDATE`. */
  update(threadId: string, patch: Partial<Omit<ThreadRecord, "threadId" | "createdAt">>): Promise<void> {
    if (!patchesAny(THREAD_COLUMNS, patch)) return Promise.resolve();
    return this.writes.patch(`t:${threadId}`, patch, (merged) => {
      const q = patchQuery("deerflow_threads", THREAD_COLUMNS, merged, "thread_id", threadId);
      return q ? this.pool.query(q) : Promise.resolve();
    });
  }

  delete(threadId: string): Promise<void> {
    return this.writes.write(`t:${threadId}`, () => this.pool.query(prepared(`DELETE FROM deerflow_threads WHERE thread_id = $1`, [threadId])));
  }

  /**
   * Filtered, ordered and paged in the database (pinned first, `updatedAt`
   * desc, id desc — bytewise, as the other stores compare). A metadata key
   * matches when its value equals the filter's (a missing key never does).
   */
  async search(f: ThreadSearch): Promise<ThreadRecord[]> {
    await this.writes.allSettled();
    const values: unknown[] = [pgText(f.userId)];
    const where = ["user_id = $1"];
    if (f.status) {
      values.push(pgText(f.status));
      where.push(`status = $${values.length}`);
    }
    for (const [k, v] of Object.entries(f.metadata ?? {})) {
      if (v === undefined) continue;
      values.push(pgText(k), jsonbText(v));
      where.push(`metadata -> $${values.length - 1}::text = $${values.length}::jsonb`);
    }
    values.push(f.limit, f.offset);
    const sql = `SELECT ${THREAD_COLS} FROM deerflow_threads WHERE ${where.join(" AND ")}
      ORDER BY COALESCE(metadata -> 'deerflow_pinned' = 'true'::jsonb, false) DESC, updated_at DESC, thread_id DESC
      LIMIT $${values.length - 1} OFFSET $${values.length}`;
    const res = await this.pool.query(prepared(sql, values));
    return res.rows.map(threadFromRow);
  }

  async listRunning(): Promise<ThreadRecord[]> {
    await this.writes.allSettled();
    const res = await this.pool.query(prepared(`SELECT ${THREAD_COLS} FROM deerflow_threads WHERE status = 'running'`, []));
    return res.rows.map(threadFromRow);
  }
}

/**
 * {@link RunStore} over `deerflow_runs`. Writes of one run go out in order
 * and reads see the writes handed in before them ({@link RowWriteQueues}):
 * a client reading a run as its stream ends sees its final status.
 */
export class PostgresRunStore implements RunStore {
  private readonly writes = new RowWriteQueues();

  constructor(private readonly pool: pg.Pool) {}

  /** Settles once every write handed in so far did (before the pool closes). */
  settled(): Promise<void> {
    return this.writes.allSettled() ?? Promise.resolve();
  }

  create(r: RunRecord): Promise<void> {
    return this.writes.write(`r:${r.runId}`, () => this.pool.query(
      prepared(`INSERT INTO deerflow_runs (${RUN_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`, [
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
        pgText(r.stopReason),
        pgText(r.error),
        pgText(r.modelName),
        r.execution ? JSON.stringify(r.execution) : null,
      ]),
    ));
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    await this.writes.settled(`r:${runId}`);
    const res = await this.pool.query(prepared(`SELECT ${RUN_COLS} FROM deerflow_runs WHERE run_id = $1`, [runId]));
    return res.rows[0] ? runFromRow(res.rows[0]) : undefined;
  }

  /**
   * Patches of one run handed in together, or while one is in flight, go out
   * as one `UPDATE` (fenced ones only with patches under the same fence).
   * A fenced patch is written only while the run's lease has the fence's
   * epoch; otherwise it rejects with `run_stale_owner` and writes nothing.
   */
  update(runId: string, patch: Partial<Omit<RunRecord, "runId" | "threadId" | "createdAt">>, options?: { fence?: RunWriteFence }): Promise<void> {
    if (!patchesAny(RUN_COLUMNS, patch)) return Promise.resolve();
    const fence = options?.fence;
    return this.writes.patch(
      `r:${runId}`,
      patch,
      async (merged) => {
        const q = patchQuery("deerflow_runs", RUN_COLUMNS, merged, "run_id", runId, fence);
        if (!q) return;
        const res = await this.pool.query(q);
        if (fence && (res.rowCount ?? 0) === 0) await this.refuseIfStale(runId, fence, Object.keys(merged));
      },
      fence ? `epoch:${fence.epoch}` : undefined,
    );
  }

  /** A fenced update that wrote nothing: `run_stale_owner` unless the run is unknown (a no-op, as unfenced). */
  private async refuseIfStale(runId: string, fence: RunWriteFence, fields: string[]): Promise<void> {
    const row = (await this.pool.query(prepared(RUN_FENCE_CHECK_SQL, [runId]))).rows[0] as { epoch: unknown } | undefined;
    if (!row) return;
    const current = row.epoch === null || row.epoch === undefined ? undefined : int8(row.epoch);
    const holder = current === undefined ? "the run holds no lease any more" : `its lease was claimed again (epoch ${current})`;
    throw new RunServiceError(
      "run_stale_owner",
      `Refused the write of run ${runId}'s record (${fields.join(", ")}): this process wrote under lease epoch ${fence.epoch}, but ${holder}; another process owns the run now`,
      { details: { run_id: runId, epoch: fence.epoch, current_epoch: current ?? null } },
    );
  }

  async listByThread(threadId: string): Promise<RunRecord[]> {
    await this.writes.allSettled();
    const res = await this.pool.query(
      prepared(`SELECT ${RUN_COLS} FROM deerflow_runs WHERE thread_id = $1 ORDER BY created_at DESC, seq DESC`, [threadId]),
    );
    return res.rows.map(runFromRow);
  }

  async deleteByThread(threadId: string): Promise<void> {
    await this.writes.writeAll(() => this.pool.query(prepared(`DELETE FROM deerflow_runs WHERE thread_id = $1`, [threadId])));
  }

  /** One statement: the runs it changed are exactly the ones it returns, even with several processes. */
  async recoverOrphans(now: string): Promise<RunRecord[]> {
    const res = await this.writes.writeAll(() => this.pool.query(
      prepared(
        `UPDATE deerflow_runs SET status = 'error', stop_reason = 'orphan_recovered', error = $1, updated_at = $2
           WHERE status IN ('pending', 'running') RETURNING ${RUN_COLS}`,
        ["The server stopped while this run was in progress", now],
      ),
    ));
    return res.rows.map(runFromRow);
  }
}

const MESSAGE_COLS = "seq, thread_id, run_id, message_id, message_type, content, created_at";

/**
 * {@link MessageStore} over `deerflow_messages`. A thread's batches go out in
 * order and its reads see the batches handed in before them.
 */
export class PostgresMessageStore implements MessageStore {
  private readonly writes = new RowWriteQueues();

  constructor(private readonly pool: pg.Pool) {}

  /** Settles once every write handed in so far did (before the pool closes). */
  settled(): Promise<void> {
    return this.writes.allSettled() ?? Promise.resolve();
  }

  /**
   * The whole batch in one statement (arrays unnested in order). A message
   * already in the transcript keeps its row, run and position and gets the
   * new content; an id repeated within the batch is stored at its first
   * position with its last content, as one-by-one inserts would leave it.
   */
  record(threadId: string, runId: string, messages: Array<Record<string, unknown>>, createdAt: string): Promise<void> {
    const at = new Map<string, number>();
    const ids: string[] = [];
    const types: string[] = [];
    const contents: string[] = [];
    for (const m of messages) {
      if (typeof m.id !== "string" || !m.id) continue;
      const seen = at.get(m.id);
      if (seen !== undefined) {
        contents[seen] = JSON.stringify(m);
        continue;
      }
      at.set(m.id, ids.length);
      ids.push(m.id);
      types.push(pgText(String(m.type ?? "unknown")));
      contents.push(JSON.stringify(m));
    }
    if (!ids.length) return Promise.resolve();
    return this.writes.write(`m:${threadId}`, () => this.pool.query(
      prepared(
        `INSERT INTO deerflow_messages (thread_id, run_id, message_id, message_type, content, created_at)
           SELECT $1, $2, m.id, m.type, m.content, $3
             FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS m(id, type, content, ord)
             ORDER BY m.ord
         ON CONFLICT (thread_id, message_id) DO UPDATE SET content = excluded.content`,
        [threadId, runId, createdAt, ids, types, contents],
      ),
    ));
  }

  async page(threadId: string, options: { limit: number; beforeSeq?: number }): Promise<{ rows: MessageRow[]; hasMore: boolean }> {
    await this.writes.settled(`m:${threadId}`);
    const before = options.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const res = await this.pool.query(
      prepared(`SELECT ${MESSAGE_COLS} FROM deerflow_messages WHERE thread_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [
        threadId,
        before,
        options.limit + 1,
      ]),
    );
    const hasMore = res.rows.length > options.limit;
    const rows = res.rows
      .slice(0, options.limit)
      .reverse()
      .map(
        (r): MessageRow => ({
          seq: int8(r.seq),
          threadId: r.thread_id as string,
          runId: r.run_id as string,
          messageId: r.message_id as string,
          messageType: r.message_type as string,
          content: parseJson(r.content, {}),
          createdAt: r.created_at as string,
        }),
      );
    return { rows, hasMore };
  }

  async runIds(threadId: string): Promise<Map<string, string>> {
    await this.writes.settled(`m:${threadId}`);
    const res = await this.pool.query(prepared(`SELECT message_id, run_id FROM deerflow_messages WHERE thread_id = $1 ORDER BY seq`, [threadId]));
    return new Map(res.rows.map((r) => [r.message_id as string, r.run_id as string]));
  }

  deleteByThread(threadId: string): Promise<void> {
    return this.writes.write(`m:${threadId}`, () => this.pool.query(prepared(`DELETE FROM deerflow_messages WHERE thread_id = $1`, [threadId])));
  }
}
