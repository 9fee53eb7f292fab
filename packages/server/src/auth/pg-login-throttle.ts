import type { Pool, PoolClient } from "pg";
import type { LoginThrottleStore } from "./account-store";
import { LOCKOUT_MS, MAX_LOGIN_FAILURES } from "./login-throttle";
import { inTransaction } from "./pg-auth-schema";

/**
 * One atomic statement, as in SQLite: two processes recording at once both
 * count, and a lock that has run out starts a fresh count.
 */
const FAIL_SQL = `
INSERT INTO auth_login_failures AS f (account, address, failures, locked_until, updated_at) VALUES ($1, $2, 1, 0, $3)
ON CONFLICT (account, address) DO UPDATE SET
  failures = CASE WHEN f.locked_until > 0 AND f.locked_until <= $3 THEN 1 ELSE f.failures + 1 END,
  locked_until = CASE
    WHEN f.locked_until > 0 AND f.locked_until <= $3 THEN 0
    WHEN f.failures + 1 >= $4 THEN $3 + $5
    ELSE f.locked_until END,
  updated_at = $3
RETURNING failures, locked_until`;

/**
 * Failed-login counters in PostgreSQL (`auth_login_failures`), shared by
 * every gateway process on the database: 5 tries per (account, address) in
 * all, not 5 per process. See the SQLite {@link LoginThrottle} for the rules.
 */
export class PgLoginThrottle implements LoginThrottleStore {
  constructor(private readonly db: () => Promise<Pool>) {}

  async lockedFor(account: string, address: string, now: number): Promise<number> {
    return lockedOn(await this.db(), account, address, now);
  }

  /**
   * The look and the count in one transaction holding the pair's row lock:
   * the row is made to exist first (ON CONFLICT DO NOTHING waits for a
   * concurrent inserter), then `FOR UPDATE` serialises every process's
   * `begin` of the pair, so checks sent at once each see the others' counts.
   */
  async begin(account: string, address: string, now: number): Promise<number> {
    return inTransaction(await this.db(), async (c) => {
      await c.query("INSERT INTO auth_login_failures (account, address, failures, locked_until, updated_at) VALUES ($1, $2, 0, 0, $3) ON CONFLICT DO NOTHING", [account, address, now]);
      const r = await c.query<{ locked_until: string }>("SELECT locked_until FROM auth_login_failures WHERE account = $1 AND address = $2 FOR UPDATE", [account, address]);
      const until = Number(r.rows[0].locked_until);
      if (until > now) return until - now;
      await fail(c, account, address, now);
      return 0;
    });
  }

  async recordFailure(account: string, address: string, now: number): Promise<number> {
    return fail(await this.db(), account, address, now);
  }

  async clear(account: string, address: string): Promise<void> {
    await (await this.db()).query("DELETE FROM auth_login_failures WHERE account = $1 AND address = $2", [account, address]);
  }
}

async function lockedOn(q: Pool | PoolClient, account: string, address: string, now: number): Promise<number> {
  const r = await q.query<{ locked_until: string }>("SELECT locked_until FROM auth_login_failures WHERE account = $1 AND address = $2 AND locked_until > $3", [account, address, now]);
  return r.rows[0] ? Number(r.rows[0].locked_until) - now : 0;
}

async function fail(q: Pool | PoolClient, account: string, address: string, now: number): Promise<number> {
  const r = await q.query<{ failures: number; locked_until: string }>(FAIL_SQL, [account, address, now, MAX_LOGIN_FAILURES, LOCKOUT_MS]);
  const failures = Number(r.rows[0].failures);
  const until = Number(r.rows[0].locked_until);
  // keep the table small: counters idle for a day are forgotten
  if (failures === 1) await q.query("DELETE FROM auth_login_failures WHERE updated_at < $1 AND locked_until <= $2", [now - 86_400_000, now]);
  return until > now ? until - now : 0;
}
