import type pg from "pg";
import type { RunLease, RunLeases, RunLock, RunLockHolder } from "../runs/backend-types";
import { int8, prepared } from "./statements";

/*
 * Both are single conditional upserts: INSERT … ON CONFLICT DO UPDATE … WHERE
 * is atomic per key, so when processes race for one slot exactly one sees its
 * row come back, and the losers (whose WHERE fails against the winner's
 * committed row) get nothing. Times are epoch ms chosen by the callers (an
 * injected clock), never the database's `now()`.
 */

const LOCK_ACQUIRE = `INSERT INTO deerflow_run_locks AS l (thread_id, run_id, owner, expires_at) VALUES ($1, $2, $3, $4)
  ON CONFLICT (thread_id) DO UPDATE SET run_id = excluded.run_id, owner = excluded.owner, expires_at = excluded.expires_at
  WHERE l.expires_at <= $5 OR l.run_id = excluded.run_id
  RETURNING run_id`;
const LOCK_RENEW = `UPDATE deerflow_run_locks SET expires_at = $4 WHERE thread_id = $1 AND run_id = $2 AND owner = $3`;
const LOCK_RELEASE = `DELETE FROM deerflow_run_locks WHERE thread_id = $1 AND run_id = $2`;
const LOCK_HOLDER = `SELECT run_id, owner, expires_at FROM deerflow_run_locks WHERE thread_id = $1`;

/** {@link RunLock} over `deerflow_run_locks`: one active run per thread across every process on the database. */
export class PostgresRunLock implements RunLock {
  constructor(private readonly pool: pg.Pool) {}

  async acquire(threadId: string, runId: string, owner: string, expiresAt: number, now: number): Promise<boolean> {
    const res = await this.pool.query(prepared(LOCK_ACQUIRE, [threadId, runId, owner, expiresAt, now]));
    return (res.rowCount ?? 0) > 0;
  }

  async renew(threadId: string, runId: string, owner: string, expiresAt: number): Promise<boolean> {
    const res = await this.pool.query(prepared(LOCK_RENEW, [threadId, runId, owner, expiresAt]));
    return (res.rowCount ?? 0) > 0;
  }

  async release(threadId: string, runId: string): Promise<void> {
    await this.pool.query(prepared(LOCK_RELEASE, [threadId, runId]));
  }

  async holder(threadId: string): Promise<RunLockHolder | undefined> {
    const res = await this.pool.query(prepared(LOCK_HOLDER, [threadId]));
    const r = res.rows[0];
    return r ? { runId: r.run_id, owner: r.owner, expiresAt: int8(r.expires_at) } : undefined;
  }
}

const LEASE_COLS = "run_id, thread_id, owner, expires_at";
// A claim takes a new epoch from the sequence (`excluded.epoch` is the proposed row's default, drawn for this
// statement): the fencing token checkpoint writes of the run carry (see PostgresCheckpointStore).
const LEASE_ACQUIRE = `INSERT INTO deerflow_run_leases AS l (${LEASE_COLS}) VALUES ($1, $2, $3, $4)
  ON CONFLICT (run_id) DO UPDATE SET thread_id = excluded.thread_id, owner = excluded.owner, expires_at = excluded.expires_at, epoch = excluded.epoch
  WHERE l.expires_at <= $5 OR l.owner = excluded.owner
  RETURNING epoch`;
const LEASE_RENEW = `UPDATE deerflow_run_leases SET expires_at = $3 WHERE run_id = $1 AND owner = $2`;
const LEASE_RELEASE = `DELETE FROM deerflow_run_leases WHERE run_id = $1 AND owner = $2`;
const LEASE_EXPIRED = `SELECT ${LEASE_COLS} FROM deerflow_run_leases WHERE expires_at < $1 ORDER BY expires_at, run_id LIMIT $2`;
const LEASE_GET = `SELECT ${LEASE_COLS} FROM deerflow_run_leases WHERE run_id = $1`;

function toLease(r: Record<string, unknown>): RunLease {
  return { runId: r.run_id as string, threadId: r.thread_id as string, owner: r.owner as string, expiresAt: int8(r.expires_at) };
}

/** {@link RunLeases} over `deerflow_run_leases`: who executes each run, renewed by heartbeats, taken over once expired. */
export class PostgresRunLeases implements RunLeases {
  constructor(private readonly pool: pg.Pool) {}

  async acquire(runId: string, threadId: string, owner: string, expiresAt: number, now: number): Promise<boolean> {
    return (await this.claim(runId, threadId, owner, expiresAt, now)) !== undefined;
  }

  async claim(runId: string, threadId: string, owner: string, expiresAt: number, now: number): Promise<number | undefined> {
    const res = await this.pool.query(prepared(LEASE_ACQUIRE, [runId, threadId, owner, expiresAt, now]));
    const row = res.rows[0] as { epoch: unknown } | undefined;
    return row ? int8(row.epoch) : undefined;
  }

  async renew(runId: string, owner: string, expiresAt: number): Promise<boolean> {
    const res = await this.pool.query(prepared(LEASE_RENEW, [runId, owner, expiresAt]));
    return (res.rowCount ?? 0) > 0;
  }

  async release(runId: string, owner: string): Promise<void> {
    await this.pool.query(prepared(LEASE_RELEASE, [runId, owner]));
  }

  async expired(before: number, limit: number): Promise<RunLease[]> {
    const res = await this.pool.query(prepared(LEASE_EXPIRED, [before, limit]));
    return res.rows.map(toLease);
  }

  async get(runId: string): Promise<RunLease | undefined> {
    const res = await this.pool.query(prepared(LEASE_GET, [runId]));
    return res.rows[0] ? toLease(res.rows[0]) : undefined;
  }
}
