import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { RunLease, RunLeases, RunLock, RunLockHolder } from "../runs/backend-types";

/**
 * Threads' run slots in this process's memory (one process: the run service
 * keeps its own in-memory fast path and only the lease bookkeeping lands here).
 */
export class MemoryRunLock implements RunLock {
  private readonly holders = new Map<string, RunLockHolder>();

  async acquire(threadId: string, runId: string, owner: string, expiresAt: number, now: number): Promise<boolean> {
    const cur = this.holders.get(threadId);
    if (cur && cur.runId !== runId && cur.expiresAt > now) return false;
    this.holders.set(threadId, { runId, owner, expiresAt });
    return true;
  }

  async renew(threadId: string, runId: string, owner: string, expiresAt: number): Promise<boolean> {
    const cur = this.holders.get(threadId);
    if (!cur || cur.runId !== runId || cur.owner !== owner) return false;
    cur.expiresAt = expiresAt;
    return true;
  }

  async release(threadId: string, runId: string): Promise<void> {
    if (this.holders.get(threadId)?.runId === runId) this.holders.delete(threadId);
  }

  async holder(threadId: string): Promise<RunLockHolder | undefined> {
    const cur = this.holders.get(threadId);
    return cur ? { ...cur } : undefined;
  }
}

/** Runs' execution leases in this process's memory. */
export class MemoryRunLeases implements RunLeases {
  private readonly leases = new Map<string, RunLease>();
  /** The last epoch handed out: one counter for every run, so an epoch is never handed out twice. */
  private lastEpoch = 0;

  async acquire(runId: string, threadId: string, owner: string, expiresAt: number, now: number): Promise<boolean> {
    return (await this.claim(runId, threadId, owner, expiresAt, now)) !== undefined;
  }

  async claim(runId: string, threadId: string, owner: string, expiresAt: number, now: number): Promise<number | undefined> {
    const cur = this.leases.get(runId);
    if (cur && cur.owner !== owner && cur.expiresAt > now) return undefined;
    this.leases.set(runId, { runId, threadId, owner, expiresAt });
    return ++this.lastEpoch;
  }

  async renew(runId: string, owner: string, expiresAt: number): Promise<boolean> {
    const cur = this.leases.get(runId);
    if (!cur || cur.owner !== owner) return false;
    cur.expiresAt = expiresAt;
    return true;
  }

  async release(runId: string, owner: string): Promise<void> {
    if (this.leases.get(runId)?.owner === owner) this.leases.delete(runId);
  }

  async expired(before: number, limit: number): Promise<RunLease[]> {
    return [...this.leases.values()]
      .filter((l) => l.expiresAt < before)
      .sort((a, b) => a.expiresAt - b.expiresAt)
      .slice(0, limit)
      .map((l) => ({ ...l }));
  }

  async get(runId: string): Promise<RunLease | undefined> {
    const cur = this.leases.get(runId);
    return cur ? { ...cur } : undefined;
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS gw_run_locks (
  thread_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS gw_run_leases (
  run_id TEXT PRIMARY KEY,
  thread_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS gw_run_leases_expiry ON gw_run_leases(expires_at);
CREATE TABLE IF NOT EXISTS gw_run_lease_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL);
INSERT OR IGNORE INTO gw_run_lease_epoch(id, last) VALUES (1, 0);
`;

/** Leases get their epoch column here (also in a data dir made before leases had epochs: its rows count as epoch 0). */
function addEpochColumn(db: Database.Database): void {
  const cols = db.prepare(`PRAGMA table_info(gw_run_leases)`).all() as Array<{ name: string }>;
  if (!cols.some((c) => c.name === "epoch")) db.exec(`ALTER TABLE gw_run_leases ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0`);
}

type Row = Record<string, unknown>;

/**
 * Run slots and leases in `gateway.db`, on a connection of their own: each
 * call is one statement, atomic against every process on the same file (an
 * upsert whose `WHERE` decides who wins).
 */
export class SqliteRunLocks {
  readonly lock: RunLock;
  readonly leases: RunLeases;
  private readonly db: Database.Database;

  constructor(file: string) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec(SCHEMA);
    addEpochColumn(db);
    this.db = db;
    const st = {
      lockAcquire: db.prepare(
        `INSERT INTO gw_run_locks(thread_id,run_id,owner,expires_at) VALUES (?,?,?,?)
         ON CONFLICT(thread_id) DO UPDATE SET run_id=excluded.run_id, owner=excluded.owner, expires_at=excluded.expires_at
         WHERE gw_run_locks.run_id = excluded.run_id OR gw_run_locks.expires_at <= ?`,
      ),
      lockRenew: db.prepare(`UPDATE gw_run_locks SET expires_at=? WHERE thread_id=? AND run_id=? AND owner=?`),
      lockRelease: db.prepare(`DELETE FROM gw_run_locks WHERE thread_id=? AND run_id=?`),
      lockHolder: db.prepare(`SELECT run_id, owner, expires_at FROM gw_run_locks WHERE thread_id=?`),
      // Each claim takes the next epoch of one counter (the fencing token of the claim, never handed out twice,
      // not even after a lease row was deleted); a renewal keeps it.
      epochNext: db.prepare(`UPDATE gw_run_lease_epoch SET last = last + 1 WHERE id = 1 RETURNING last`),
      leaseAcquire: db.prepare(
        `INSERT INTO gw_run_leases(run_id,thread_id,owner,expires_at,epoch) VALUES (?,?,?,?,?)
         ON CONFLICT(run_id) DO UPDATE SET thread_id=excluded.thread_id, owner=excluded.owner, expires_at=excluded.expires_at, epoch=excluded.epoch
         WHERE gw_run_leases.owner = excluded.owner OR gw_run_leases.expires_at <= ?`,
      ),
      leaseRenew: db.prepare(`UPDATE gw_run_leases SET expires_at=? WHERE run_id=? AND owner=?`),
      leaseRelease: db.prepare(`DELETE FROM gw_run_leases WHERE run_id=? AND owner=?`),
      leaseExpired: db.prepare(`SELECT run_id, thread_id, owner, expires_at FROM gw_run_leases WHERE expires_at < ? ORDER BY expires_at LIMIT ?`),
      leaseGet: db.prepare(`SELECT run_id, thread_id, owner, expires_at FROM gw_run_leases WHERE run_id=?`),
    };
    const toLease = (r: Row): RunLease => ({ runId: r.run_id as string, threadId: r.thread_id as string, owner: r.owner as string, expiresAt: Number(r.expires_at) });
    this.lock = {
      acquire: async (threadId, runId, owner, expiresAt, now) => st.lockAcquire.run(threadId, runId, owner, expiresAt, now).changes > 0,
      renew: async (threadId, runId, owner, expiresAt) => st.lockRenew.run(expiresAt, threadId, runId, owner).changes > 0,
      release: async (threadId, runId) => void st.lockRelease.run(threadId, runId),
      holder: async (threadId) => {
        const r = st.lockHolder.get(threadId) as Row | undefined;
        return r ? { runId: r.run_id as string, owner: r.owner as string, expiresAt: Number(r.expires_at) } : undefined;
      },
    };
    // One write transaction: the epoch drawn and the lease taken together, against every process on the file.
    const claim = db.transaction((runId: string, threadId: string, owner: string, expiresAt: number, now: number): number | undefined => {
      const epoch = Number((st.epochNext.get() as { last: number }).last);
      return st.leaseAcquire.run(runId, threadId, owner, expiresAt, epoch, now).changes > 0 ? epoch : undefined;
    });
    this.leases = {
      acquire: async (runId, threadId, owner, expiresAt, now) => claim(runId, threadId, owner, expiresAt, now) !== undefined,
      claim: async (runId, threadId, owner, expiresAt, now) => claim(runId, threadId, owner, expiresAt, now),
      renew: async (runId, owner, expiresAt) => st.leaseRenew.run(expiresAt, runId, owner).changes > 0,
      release: async (runId, owner) => void st.leaseRelease.run(runId, owner),
      expired: async (before, limit) => (st.leaseExpired.all(before, limit) as Row[]).map(toLease),
      get: async (runId) => {
        const r = st.leaseGet.get(runId) as Row | undefined;
        return r ? toLease(r) : undefined;
      },
    };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
