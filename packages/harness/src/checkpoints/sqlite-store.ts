import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { readEnv } from "../config/env-names";
import { CheckpointError } from "../errors";
import type { CheckpointRecord, CheckpointStore, ListCheckpointOptions } from "./types";
import { WalCheckpointWorker } from "./wal-checkpointer";
import { batcherFor, deferredStep, UNCHANGED_WRITE_CODE } from "../sqlite";
import type { WriteBatcher } from "../sqlite";

type Db = Database.Database;

const COLS = "thread_id, checkpoint_id, parent_id, created_at, metadata, delta";
// A checkpoint is stored only on top of its parent: writes are queued without waiting for the previous one's
// commit, so a parent whose write failed (or a thread deleted meanwhile) must not leave a child whose state,
// rebuilt from its chain, would silently lack everything before it.
// Positional parameters: binding named ones makes a string of each name and reads it off an object, per statement.
const INSERT_CHILD_SQL = `INSERT INTO checkpoints (${COLS}) SELECT ?, ?, ?, ?, ?, ?
  WHERE EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?)`;
/** A thread's first checkpoint (no parent to check). */
const INSERT_ROOT_SQL = `INSERT INTO checkpoints (${COLS}) VALUES (?, ?, NULL, ?, ?, ?)`;

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
 * SQLite checkpoint store (better-sqlite3, WAL). Each row holds one delta, so
 * storage grows linearly with the conversation.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  /** The open database (shared with other stores, e.g. the gateway's thread/run tables). */
  readonly db: Db;
  private readonly ownsDb: boolean;
  private readonly walWorker?: WalCheckpointWorker;
  private readonly batcher: WriteBatcher;
  private readonly stmts: {
    latest: Database.Statement;
    headId: Database.Statement;
    byId: Database.Statement;
    all: Database.Statement;
    listAll: Database.Statement;
    listBefore: Database.Statement;
    rowidOf: Database.Statement;
  };

  /** Open (or create) a store at `path` (`:memory:` works), or reuse an open database. */
  constructor(pathOrDb: string | Db) {
    if (typeof pathOrDb === "string") {
      if (pathOrDb !== ":memory:") mkdirSync(dirname(pathOrDb), { recursive: true });
      try {
        this.db = new Database(pathOrDb);
      } catch (err) {
        throw new CheckpointError(`Cannot open checkpoint database at ${pathOrDb}: ${(err as Error).message}`, { cause: err });
      }
      this.ownsDb = true;
      this.db.pragma("journal_mode = WAL");
      // WAL + NORMAL: every commit is atomic and the file is never corrupted; a power loss may drop the
      // last commits. WAL checkpoints (the fsyncs) run on a worker thread instead of inside a run.
      this.db.pragma("synchronous = NORMAL");
      if (pathOrDb !== ":memory:" && !readEnv("DEER_FLOW_SQLITE_INLINE_CHECKPOINT")) {
        try {
          this.walWorker = new WalCheckpointWorker(pathOrDb);
          this.db.pragma("wal_autocheckpoint = 0");
        } catch {
          // keep SQLite's automatic checkpoints
        }
      }
    } else {
      this.db = pathOrDb;
      this.ownsDb = false;
    }
    // `seq` orders a thread's checkpoints. A plain rowid key is enough: a new row's is above every stored row's,
    // and without AUTOINCREMENT a commit does not also rewrite the sqlite_sequence page (one page in four of a
    // checkpoint insert). Tables created with AUTOINCREMENT keep it and work the same.
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS checkpoints (
        seq INTEGER PRIMARY KEY,
        thread_id TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        parent_id TEXT,
        created_at TEXT NOT NULL,
        metadata TEXT NOT NULL,
        delta TEXT NOT NULL,
        UNIQUE (thread_id, checkpoint_id)
      );
      CREATE INDEX IF NOT EXISTS checkpoints_thread_seq ON checkpoints (thread_id, seq);
    `);
    this.stmts = {
      latest: this.db.prepare(`SELECT ${COLS} FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1`),
      headId: this.db.prepare(`SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1`).pluck(),
      byId: this.db.prepare(`SELECT ${COLS} FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?`),
      all: this.db.prepare(`SELECT ${COLS} FROM checkpoints WHERE thread_id = ? ORDER BY seq ASC`),
      listAll: this.db.prepare(`SELECT ${COLS} FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT ?`),
      listBefore: this.db.prepare(`SELECT ${COLS} FROM checkpoints WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),
      rowidOf: this.db.prepare(`SELECT seq FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?`),
    };
    this.batcher = batcherFor(this.db);
  }

  /**
   * Persist a checkpoint. Writes queued together (concurrent runs) share one
   * transaction (group commit); the promise resolves once that transaction
   * has committed, so "saved" still means "on disk".
   */
  put(record: CheckpointRecord): Promise<void> {
    // Serialised when the batch commits: a checkpoint record (and the immutable messages of its delta) never changes.
    const { threadId, checkpointId, parentId } = record;
    const step = parentId
      ? deferredStep(
          INSERT_CHILD_SQL,
          () => [threadId, checkpointId, parentId, record.createdAt, JSON.stringify(record.metadata), JSON.stringify(record.delta), threadId, parentId],
          `its parent checkpoint ${parentId} is not stored`,
        )
      : deferredStep(INSERT_ROOT_SQL, () => [threadId, checkpointId, record.createdAt, JSON.stringify(record.metadata), JSON.stringify(record.delta)]);
    // The batcher's promise with a failure handler, not an async function: one promise less per checkpoint.
    return this.batcher.write(step, [`checkpoints:${record.threadId}`]).catch((err: unknown) => {
      const parentMissing = (err as { code?: string }).code === UNCHANGED_WRITE_CODE;
      throw new CheckpointError(`Failed to write checkpoint ${record.checkpointId}: ${(err as Error).message}`, {
        cause: err,
        code: parentMissing ? "checkpoint_parent_missing" : undefined,
      });
    });
  }

  /** Commit the pending writes of `threadId` first and wait for them (so a read sees them). */
  private settle(threadId: string): Promise<void> {
    return this.batcher.settle(`checkpoints:${threadId}`);
  }

  async get(threadId: string, checkpointId?: string): Promise<CheckpointRecord | undefined> {
    await this.settle(threadId);
    const row = (checkpointId ? this.stmts.byId.get(threadId, checkpointId) : this.stmts.latest.get(threadId)) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  async headId(threadId: string): Promise<string | undefined> {
    await this.settle(threadId);
    return (this.stmts.headId.get(threadId) as string | undefined) ?? undefined;
  }

  async chain(threadId: string, checkpointId: string): Promise<CheckpointRecord[]> {
    await this.settle(threadId);
    const rows = this.stmts.all.all(threadId) as Row[];
    const byId = new Map(rows.map((r) => [r.checkpoint_id, r]));
    const out: CheckpointRecord[] = [];
    let cur = byId.get(checkpointId);
    while (cur) {
      out.push(toRecord(cur));
      cur = cur.parent_id ? byId.get(cur.parent_id) : undefined;
    }
    return out.reverse();
  }

  async list(threadId: string, options: ListCheckpointOptions = {}): Promise<CheckpointRecord[]> {
    await this.settle(threadId);
    const limit = options.limit ?? -1;
    if (options.before) {
      const seq = this.stmts.rowidOf.get(threadId, options.before) as { seq: number } | undefined;
      if (!seq) return [];
      return (this.stmts.listBefore.all(threadId, seq.seq, limit) as Row[]).map(toRecord);
    }
    return (this.stmts.listAll.all(threadId, limit) as Row[]).map(toRecord);
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.batcher.write({ sql: `DELETE FROM checkpoints WHERE thread_id = ?`, params: [threadId] }, [`checkpoints:${threadId}`]);
  }

  /** Total bytes of stored deltas + metadata for a thread (for storage benchmarks). */
  async storedBytes(threadId: string): Promise<number> {
    await this.settle(threadId);
    const row = this.db
      .prepare(`SELECT COALESCE(SUM(LENGTH(delta) + LENGTH(metadata)), 0) AS n FROM checkpoints WHERE thread_id = ?`)
      .get(threadId) as { n: number };
    return row.n;
  }

  async close(): Promise<void> {
    await this.batcher.close();
    await this.walWorker?.close();
    if (this.ownsDb && this.db.open) this.db.close();
  }
}
