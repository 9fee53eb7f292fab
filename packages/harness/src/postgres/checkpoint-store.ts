import type pg from "pg";
import type { CheckpointRecord, CheckpointStore, ListCheckpointOptions } from "../checkpoints/types";
import { CheckpointError } from "../errors";
import { prepared } from "./statements";

const COLS = "thread_id, checkpoint_id, parent_id, created_at, metadata, delta";

// One statement per checkpoint, and it is stored only on top of its parent: the checkpointer queues a child
// without waiting for its parent's commit, so a parent whose write failed (or a thread deleted meanwhile) must
// not leave a child whose state, rebuilt from its chain, would lack everything before it. FOR KEY SHARE holds
// the parent row until this insert commits, so a concurrent deleteThread cannot remove it in between.
const INSERT_SQL = `INSERT INTO deerflow_checkpoints (${COLS})
  SELECT $1, $2, $3, $4, $5, $6
  WHERE $3::text IS NULL OR EXISTS (
    SELECT 1 FROM deerflow_checkpoints WHERE thread_id = $1 AND checkpoint_id = $3 FOR KEY SHARE)`;
const LATEST_SQL = `SELECT ${COLS} FROM deerflow_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1`;
const HEAD_SQL = `SELECT checkpoint_id FROM deerflow_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1`;
const BY_ID_SQL = `SELECT ${COLS} FROM deerflow_checkpoints WHERE thread_id = $1 AND checkpoint_id = $2`;
// The ancestry in one round trip: walk parent ids from the checkpoint up (each step a primary-key probe).
const CHAIN_SQL = `WITH RECURSIVE chain AS (
    SELECT ${COLS}, 0 AS depth FROM deerflow_checkpoints WHERE thread_id = $1 AND checkpoint_id = $2
    UNION ALL
    SELECT c.thread_id, c.checkpoint_id, c.parent_id, c.created_at, c.metadata, c.delta, chain.depth + 1
      FROM deerflow_checkpoints c JOIN chain ON c.thread_id = $1 AND c.checkpoint_id = chain.parent_id
  ) SELECT ${COLS} FROM chain ORDER BY depth DESC`;
const LIST_SQL = `SELECT ${COLS} FROM deerflow_checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2`;
// An unknown `before` id compares with NULL, which lists nothing (as the other stores do).
const LIST_BEFORE_SQL = `SELECT ${COLS} FROM deerflow_checkpoints WHERE thread_id = $1
  AND seq < (SELECT seq FROM deerflow_checkpoints WHERE thread_id = $1 AND checkpoint_id = $3)
  ORDER BY seq DESC LIMIT $2`;

interface Row {
  thread_id: string;
  checkpoint_id: string;
  parent_id: string | null;
  created_at: string;
  metadata: string;
  delta: string;
}

function toRecord(row: Row): CheckpointRecord {
  return {
    threadId: row.thread_id,
    checkpointId: row.checkpoint_id,
    parentId: row.parent_id,
    createdAt: row.created_at,
    metadata: JSON.parse(row.metadata),
    delta: JSON.parse(row.delta),
  };
}

const settledOk = () => undefined;

/**
 * PostgreSQL checkpoint store: the same rows as the SQLite store (one delta
 * per checkpoint, so storage grows linearly with the conversation), on a
 * shared pool. Each operation is one statement (one round trip); a put
 * resolves once its row is committed.
 *
 * The checkpointer queues a child before its parent's commit, and a pool
 * would send the two on different connections in either order; so the
 * writes of one thread go out one after the other, and a read of a thread
 * first waits for that thread's writes (it sees them, as on SQLite).
 */
export class PostgresCheckpointStore implements CheckpointStore {
  /** Per thread: the last write handed to the database (settled either way). */
  private readonly tails = new Map<string, Promise<void>>();

  /** The tables must exist: open through `openPostgresStorage`, which runs the migrations. */
  constructor(private readonly pool: pg.Pool) {}

  /** Run `write` after the thread's earlier writes settled. */
  private ordered(threadId: string, write: () => Promise<void>): Promise<void> {
    const prev = this.tails.get(threadId);
    const run = prev ? prev.then(write) : write();
    const tail = run.then(settledOk, settledOk);
    this.tails.set(threadId, tail);
    void tail.then(() => {
      if (this.tails.get(threadId) === tail) this.tails.delete(threadId);
    });
    return run;
  }

  /** The thread's pending writes, settled (resolved at once when there are none). */
  private settle(threadId: string): Promise<void> | undefined {
    return this.tails.get(threadId);
  }

  put(record: CheckpointRecord): Promise<void> {
    return this.ordered(record.threadId, () => this.insert(record));
  }

  private async insert(record: CheckpointRecord): Promise<void> {
    let inserted: number;
    try {
      const res = await this.pool.query(
        prepared(INSERT_SQL, [
          record.threadId,
          record.checkpointId,
          record.parentId,
          record.createdAt,
          JSON.stringify(record.metadata),
          JSON.stringify(record.delta),
        ]),
      );
      inserted = res.rowCount ?? 0;
    } catch (err) {
      throw new CheckpointError(`Failed to write checkpoint ${record.checkpointId}: ${(err as Error).message}`, { cause: err });
    }
    if (inserted === 0) {
      throw new CheckpointError(`Failed to write checkpoint ${record.checkpointId}: its parent checkpoint ${record.parentId} is not stored`, {
        code: "checkpoint_parent_missing",
      });
    }
  }

  async get(threadId: string, checkpointId?: string): Promise<CheckpointRecord | undefined> {
    await this.settle(threadId);
    const res = await this.read<Row>(checkpointId ? prepared(BY_ID_SQL, [threadId, checkpointId]) : prepared(LATEST_SQL, [threadId]));
    return res[0] ? toRecord(res[0]) : undefined;
  }

  async headId(threadId: string): Promise<string | undefined> {
    await this.settle(threadId);
    const res = await this.read<{ checkpoint_id: string }>(prepared(HEAD_SQL, [threadId]));
    return res[0]?.checkpoint_id;
  }

  async chain(threadId: string, checkpointId: string): Promise<CheckpointRecord[]> {
    await this.settle(threadId);
    return (await this.read<Row>(prepared(CHAIN_SQL, [threadId, checkpointId]))).map(toRecord);
  }

  async list(threadId: string, options: ListCheckpointOptions = {}): Promise<CheckpointRecord[]> {
    await this.settle(threadId);
    const limit = options.limit ?? null;
    const q = options.before ? prepared(LIST_BEFORE_SQL, [threadId, limit, options.before]) : prepared(LIST_SQL, [threadId, limit]);
    return (await this.read<Row>(q)).map(toRecord);
  }

  deleteThread(threadId: string): Promise<void> {
    return this.ordered(threadId, async () => {
      await this.read(prepared(`DELETE FROM deerflow_checkpoints WHERE thread_id = $1`, [threadId]));
    });
  }

  /** Bytes the thread's checkpoint rows take (their stored text; for storage figures). */
  async storedBytes(threadId: string): Promise<number> {
    await this.settle(threadId);
    const res = await this.read<{ n: string }>(
      prepared(`SELECT COALESCE(SUM(octet_length(delta) + octet_length(metadata)), 0) AS n FROM deerflow_checkpoints WHERE thread_id = $1`, [threadId]),
    );
    return Number(res[0]?.n ?? 0);
  }

  /** Wait for the writes handed in so far (the pool belongs to the storage that opened it). */
  async close(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }

  private async read<R extends pg.QueryResultRow>(q: pg.QueryConfig): Promise<R[]> {
    try {
      return (await this.pool.query<R>(q)).rows;
    } catch (err) {
      throw new CheckpointError(`Checkpoint store query failed: ${(err as Error).message}`, { cause: err });
    }
  }
}
