import type pg from "pg";
import type { CheckpointFence, CheckpointRecord, CheckpointStore, ListCheckpointOptions } from "../checkpoints/types";
import { CheckpointError } from "../errors";
import { prepared } from "./statements";
import { ThreadWriteQueues } from "./thread-writes";

/** `c1` or `c1…c4 (4 steps)` for messages. */
function names(chain: readonly CheckpointRecord[]): string {
  return chain.length === 1 ? chain[0].checkpointId : `${chain[0].checkpointId}…${chain[chain.length - 1].checkpointId} (${chain.length} steps)`;
}

const COLS = "thread_id, checkpoint_id, parent_id, created_at, metadata, delta";

// One statement per checkpoint, and it is stored only on top of its parent: the checkpointer queues a child
// without waiting for its parent's commit, so a parent whose write failed (or a thread deleted meanwhile) must
// not leave a child whose state, rebuilt from its chain, would lack everything before it. FOR KEY SHARE holds
// the parent row until this insert commits, so a concurrent deleteThread cannot remove it in between.
const INSERT_SQL = `INSERT INTO deerflow_checkpoints (${COLS})
  SELECT $1, $2, $3, $4, $5, $6
  WHERE $3::text IS NULL OR EXISTS (
    SELECT 1 FROM deerflow_checkpoints WHERE thread_id = $1 AND checkpoint_id = $3 FOR KEY SHARE)`;
// Several steps of one run queued while the previous statement was in flight: one statement, all or nothing
// (each row's parent is the row before it, so only the first one's parent has to be stored already).
const INSERT_CHAIN_SQL = `INSERT INTO deerflow_checkpoints (${COLS})
  SELECT $1, c.id, c.parent, c.created, c.metadata, c.delta
    FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS c(id, parent, created, metadata, delta, ord)
   WHERE $2::text IS NULL OR EXISTS (
     SELECT 1 FROM deerflow_checkpoints WHERE thread_id = $1 AND checkpoint_id = $2 FOR KEY SHARE)
   ORDER BY c.ord`;
// A fenced write (a run's owner writing under its lease claim) goes in only while the run's lease still has the
// epoch of that claim, checked in the same statement: FOR SHARE holds the lease row until the insert commits, so a
// takeover's claim (which updates the row's epoch) either committed before (the write is refused) or waits until
// after (the write was legitimately the owner's). No write of a stale owner lands after the takeover's claim.
const FENCE_SQL = ` AND EXISTS (SELECT 1 FROM deerflow_run_leases WHERE run_id = $FR AND epoch = $FE FOR SHARE)`;
function fenced(sql: string, next: number): string {
  const cond = FENCE_SQL.replace("$FR", `$${next}::text`).replace("$FE", `$${next + 1}::bigint`);
  const out = sql.replace(/WHERE (\$\d::text IS NULL OR EXISTS \([\s\S]*?FOR KEY SHARE\))/, (_m, parent: string) => `WHERE (${parent})${cond}`);
  if (out === sql) throw new Error("checkpoint insert statement without its parent condition");
  return out;
}
const INSERT_FENCED_SQL = fenced(INSERT_SQL, 7);
const INSERT_CHAIN_FENCED_SQL = fenced(INSERT_CHAIN_SQL, 8);
const LEASE_EPOCH_SQL = `SELECT epoch FROM deerflow_run_leases WHERE run_id = $1`;
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

/**
 * PostgreSQL checkpoint store: the same rows as the SQLite store (one delta
 * per checkpoint, so storage grows linearly with the conversation), on a
 * shared pool. A put resolves once its row is committed; writes of a thread
 * go out in order (several queued steps of a run in one statement), and a
 * read of a thread first waits for that thread's queued writes, so it sees
 * them, as on SQLite.
 */
export class PostgresCheckpointStore implements CheckpointStore {
  private readonly writes: ThreadWriteQueues;
  /** Fences whose owner was told it is stale (once each). */
  private readonly notified = new WeakSet<CheckpointFence>();

  /** The tables must exist: open through `openPostgresStorage`, which runs the migrations. */
  constructor(private readonly pool: pg.Pool) {
    this.writes = new ThreadWriteQueues({
      putChain: (chain, fence) => this.insert(chain, fence),
      deleteThread: async (threadId) => {
        await this.read(prepared(`DELETE FROM deerflow_checkpoints WHERE thread_id = $1`, [threadId]));
      },
    });
  }

  /** The thread's queued writes, settled (undefined when there are none). */
  private settle(threadId: string): Promise<void> | undefined {
    return this.writes.settled(threadId);
  }

  put(record: CheckpointRecord, fence?: CheckpointFence): Promise<void> {
    return this.writes.put(record, fence);
  }

  /** Insert a chain of one thread (each record the parent of the next) in one statement, under `fence` when given. */
  private async insert(chain: CheckpointRecord[], fence: CheckpointFence | undefined): Promise<void> {
    const first = chain[0];
    let inserted: number;
    try {
      const values =
        chain.length === 1
          ? [first.threadId, first.checkpointId, first.parentId, first.createdAt, JSON.stringify(first.metadata), JSON.stringify(first.delta)]
          : [
              first.threadId,
              first.parentId,
              chain.map((r) => r.checkpointId),
              chain.map((r) => r.parentId),
              chain.map((r) => r.createdAt),
              chain.map((r) => JSON.stringify(r.metadata)),
              chain.map((r) => JSON.stringify(r.delta)),
            ];
      const sql = chain.length === 1 ? (fence ? INSERT_FENCED_SQL : INSERT_SQL) : fence ? INSERT_CHAIN_FENCED_SQL : INSERT_CHAIN_SQL;
      if (fence) values.push(fence.runId, fence.epoch as never);
      inserted = (await this.pool.query(prepared(sql, values))).rowCount ?? 0;
    } catch (err) {
      throw new CheckpointError(`Failed to write checkpoint ${names(chain)}: ${(err as Error).message}`, { cause: err });
    }
    if (inserted > 0) return;
    if (fence) await this.refuseIfStale(chain, fence);
    throw new CheckpointError(`Failed to write checkpoint ${names(chain)}: its parent checkpoint ${first.parentId} is not stored`, {
      code: "checkpoint_parent_missing",
    });
  }

  /** A fenced write that stored nothing: throw `checkpoint_stale_owner` when the fence is why (and tell its owner). */
  private async refuseIfStale(chain: CheckpointRecord[], fence: CheckpointFence): Promise<void> {
    const rows = await this.read<{ epoch: string | number }>(prepared(LEASE_EPOCH_SQL, [fence.runId]));
    const current = rows[0] ? Number(rows[0].epoch) : undefined;
    if (current === fence.epoch) return;
    const holder = current === undefined ? "the run holds no lease any more" : `its lease was claimed again (epoch ${current})`;
    const err = new CheckpointError(
      `Refused checkpoint ${names(chain)} of run ${fence.runId}: this process wrote under lease epoch ${fence.epoch}, but ${holder}; another process owns the run now`,
      { code: "checkpoint_stale_owner", details: { run_id: fence.runId, epoch: fence.epoch, current_epoch: current ?? null } },
    );
    if (!this.notified.has(fence)) {
      this.notified.add(fence);
      try {
        fence.onStale?.(err);
      } catch {
        // the owner's reaction is its own; the write is refused either way
      }
    }
    throw err;
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
    return this.writes.delete(threadId);
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
    await this.writes.allSettled();
  }

  private async read<R extends pg.QueryResultRow>(q: pg.QueryConfig): Promise<R[]> {
    try {
      return (await this.pool.query<R>(q)).rows;
    } catch (err) {
      throw new CheckpointError(`Checkpoint store query failed: ${(err as Error).message}`, { cause: err });
    }
  }
}
