import type Database from "better-sqlite3";
import type { LoginThrottleStore } from "./account-store";

/** Failed logins of one (account, client address) pair before it is locked. */
export const MAX_LOGIN_FAILURES = 5;
/** How long a locked pair stays locked. */
export const LOCKOUT_MS = 300_000;

/**
 * Failed-login counters per (account, client address) in the shared
 * database, so N gateway processes on one data dir allow 5 tries in all,
 * not 5 each. Keyed by the pair (not the address alone, as DeerFlow does):
 * one person mistyping cannot lock out everyone behind the same NAT, and
 * guessing one account's password is capped whatever the address.
 */
export class LoginThrottle implements LoginThrottleStore {
  private readonly lockedStmt: Database.Statement;
  private readonly failStmt: Database.Statement;
  private readonly clearStmt: Database.Statement;
  private readonly pruneStmt: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.lockedStmt = db.prepare("SELECT locked_until FROM login_failures WHERE account = ? AND address = ? AND locked_until > ?");
    // one atomic statement: two processes recording at once both count. A lock that has run out starts a fresh count.
    this.failStmt = db.prepare(`
      INSERT INTO login_failures (account, address, failures, locked_until, updated_at) VALUES (@account, @address, 1, 0, @now)
      ON CONFLICT (account, address) DO UPDATE SET
        failures = CASE WHEN locked_until > 0 AND locked_until <= @now THEN 1 ELSE failures + 1 END,
        locked_until = CASE
          WHEN locked_until > 0 AND locked_until <= @now THEN 0
          WHEN failures + 1 >= @max THEN @now + @lock
          ELSE locked_until END,
        updated_at = @now
      RETURNING failures, locked_until`);
    this.clearStmt = db.prepare("DELETE FROM login_failures WHERE account = ? AND address = ?");
    this.pruneStmt = db.prepare("DELETE FROM login_failures WHERE updated_at < ? AND locked_until <= ?");
  }

  /** Milliseconds until the pair may try again, or 0 when it is not locked. */
  lockedFor(account: string, address: string, now: number): number {
    const r = this.lockedStmt.get(account, address, now) as { locked_until: number } | undefined;
    return r ? r.locked_until - now : 0;
  }

  /**
   * Start a password check of the pair: 0 when it may go ahead (the attempt
   * is counted now, as a failure until {@link clear} says otherwise), else
   * the milliseconds it stays locked. Counting before the slow password hash
   * rather than after it matters: checks sent at once would all pass a
   * "locked?" look taken before any of them had failed, and each would get
   * its guess. One immediate transaction, so processes sharing the database
   * cannot interleave between the look and the count either.
   */
  begin(account: string, address: string, now: number): number {
    return this.db
      .transaction(() => {
        const locked = this.lockedFor(account, address, now);
        if (locked > 0) return locked;
        this.recordFailure(account, address, now);
        return 0;
      })
      .immediate();
  }

  /** Count a failure; returns the milliseconds of lockout it started (0 while under the limit). */
  recordFailure(account: string, address: string, now: number): number {
    const r = this.failStmt.get({ account, address, now, max: MAX_LOGIN_FAILURES, lock: LOCKOUT_MS }) as { failures: number; locked_until: number };
    // keep the table small: counters idle for a day are forgotten
    if (r.failures === 1) this.pruneStmt.run(now - 86_400_000, now);
    return r.locked_until > now ? r.locked_until - now : 0;
  }

  /** A successful login clears the pair's counter. */
  clear(account: string, address: string): void {
    this.clearStmt.run(account, address);
  }
}
