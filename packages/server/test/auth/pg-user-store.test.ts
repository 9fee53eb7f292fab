import { openPgPool } from "@deerflow-ts/harness";
import { freshPostgresDatabase } from "@deerflow-ts/harness/testing";
import type { FreshDatabase } from "@deerflow-ts/harness/testing";
import pg from "pg";
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthError, isAuthError, LOCKOUT_MS, MAX_LOGIN_FAILURES, PgUserStore } from "../../src/auth";

const PW = "a-long-enough-passphrase";
const SERVER = process.env.DEERFLOW_TEST_POSTGRES_URL;
const log = () => undefined;

describe.skipIf(!SERVER)("PgUserStore (accounts on PostgreSQL)", () => {
  let fresh: FreshDatabase;
  const pools: Pool[] = [];
  const stores: PgUserStore[] = [];
  /** A store on its own pool: another gateway process, as far as PostgreSQL can tell. */
  const processStore = async () => {
    const pool = await openPgPool({ url: fresh.url, log, max: 3 });
    pools.push(pool);
    const store = new PgUserStore({ pool });
    stores.push(store);
    return store;
  };
  let store: PgUserStore;
  /** Each test's accounts are its own (one database for the file). */
  let n = 0;
  const email = (what: string) => `${what}-${++n}@example.com`;

  /**
   * Run `race` while another session holds writes (and row locks) on `auth_users`, releasing them once
   * `waiters` sessions are waiting for a lock: every racer is then inside its transaction at once, so the
   * race is certain rather than a matter of timing.
   */
  async function whileAccountsHeld<T>(waiters: number, race: () => Promise<T>): Promise<T> {
    const blocker = new pg.Client({ connectionString: fresh.url });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE auth_users IN EXCLUSIVE MODE");
      const racing = race();
      let waiting = 0;
      for (let i = 0; i < 1000 && waiting < waiters; i++) {
        const r = await blocker.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        waiting = r.rows[0].n;
        if (waiting < waiters) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await blocker.query("COMMIT");
      expect(waiting).toBe(waiters);
      return await racing;
    } finally {
      await blocker.end();
    }
  }

  beforeAll(async () => {
    fresh = await freshPostgresDatabase(SERVER!, "auth");
    store = await processStore();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const p of pools) await p.end();
    await fresh?.drop();
  });

  it("creates accounts with the same records as auth.db, email case-insensitive and unique", async () => {
    const u = await store.create({ email: email("Alice"), password: PW, systemRole: "user" });
    expect(u).toMatchObject({ systemRole: "user", needsSetup: false, oauthProvider: null, oauthSubject: null, tokenVersion: 0, hasPassword: true });
    expect(u.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await store.getByEmail(u.email.toUpperCase())).toEqual(u);
    expect(await store.getById(u.id)).toEqual(u);
    await expect(store.create({ email: u.email.toLowerCase(), password: PW, systemRole: "user" })).rejects.toMatchObject({ code: "auth.email_exists" });
    await expect(store.create({ email: "not an email", password: PW, systemRole: "user" })).rejects.toMatchObject({ code: "auth.invalid_email" });
    await expect(store.create({ email: email("weak"), password: "short", systemRole: "user" })).rejects.toBeInstanceOf(AuthError);
    expect((await store.list()).map((x) => x.id)).toContain(u.id);
  });

  it("checks passwords, and a new password bumps the token version", async () => {
    const u = await store.create({ email: email("pw"), password: PW, systemRole: "user" });
    expect((await store.verifyCredentials(u.email, PW))?.id).toBe(u.id);
    expect(await store.verifyCredentials(u.email, "wrong-passphrase-here")).toBeNull();
    expect(await store.verifyCredentials("nobody@example.com", PW)).toBeNull();
    expect(await store.setPassword(u.id, "another-long-passphrase")).toBe(1);
    expect(await store.checkPassword(u.id, "another-long-passphrase")).toBe(true);
    expect(await store.checkPassword(u.id, PW)).toBe(false);
    expect(await store.bumpTokenVersion(u.id)).toBe(2);
    await expect(store.bumpTokenVersion("no-such-id")).rejects.toMatchObject({ code: "auth.user_not_found" });
  });

  it("OIDC identities: linked once, looked up by (provider, subject); a second account for the identity is refused", async () => {
    const sso = await store.create({ email: email("sso"), systemRole: "user", oauthProvider: "idp", oauthSubject: `sub-${n}` });
    expect(sso.hasPassword).toBe(false);
    expect((await store.getByOauth("idp", `sub-${n}`))?.id).toBe(sso.id);
    await expect(store.create({ email: email("sso-twin"), systemRole: "user", oauthProvider: "idp", oauthSubject: sso.oauthSubject })).rejects.toMatchObject({
      code: "auth.email_exists",
      message: "This OIDC identity is already linked to an account",
    });
    const local = await store.create({ email: email("local"), password: PW, systemRole: "user" });
    expect(await store.linkOauth(local.id, "other-idp", "s1")).toMatchObject({ oauthProvider: "other-idp", oauthSubject: "s1" });
    const renamed = await store.setEmail(local.id, email("renamed"), { completeSetup: true });
    expect(renamed.email).toMatch(/^renamed-/);
    await expect(store.setEmail(local.id, sso.email)).rejects.toMatchObject({ code: "auth.email_exists" });
  });

  it("personal access tokens: minted, resolved by secret, listed, revoked, and gone with their account", async () => {
    const u = await store.create({ email: email("tok"), password: PW, systemRole: "user" });
    const t = await store.tokens.create(u.id, "ci", ["run", "read", "run"]);
    expect(t.scopes).toEqual(["read", "run"]);
    expect(t.secret).toMatch(/^dfp_/);
    const owner = await store.tokens.resolve(t.secret);
    expect(owner).toMatchObject({ token: { id: t.id, name: "ci" }, user: { id: u.id, email: u.email, systemRole: "user", needsSetup: false } });
    expect((await store.tokens.get(u.id, t.id))?.lastUsedAt).not.toBeNull();
    expect(await store.tokens.resolve("dfp_unknown")).toBeUndefined();
    expect((await store.tokens.list(u.id)).map((x) => x.id)).toEqual([t.id]);
    await expect(store.tokens.create("no-such-user", "x", ["read"])).rejects.toMatchObject({ code: "auth.user_not_found" });
    const second = await store.tokens.create(u.id, "second", ["read"]);
    expect(await store.tokens.revoke(u.id, t.id)).toBe(true);
    expect(await store.tokens.revoke(u.id, t.id)).toBe(false);
    expect(await store.tokens.resolve(t.secret)).toBeUndefined();
    await store.delete(u.id);
    expect(await store.tokens.resolve(second.secret)).toBeUndefined();
  });

  it("exactly one admin comes out of initialize racing on eight processes (pools) at once", { timeout: 60_000 }, async () => {
    const others = await Promise.all(Array.from({ length: 7 }, () => processStore()));
    const racers = [store, ...others];
    for (const s of racers) expect(await s.countAdmins()).toBe(0); // each has migrated and connected
    // Without the admins lock each attempt would count no admin, wait at the held table, and insert one;
    // with it seven wait for the first.
    const results = await whileAccountsHeld(8, () => Promise.allSettled(racers.map((s, i) => s.initializeAdmin({ email: email(`admin-${i}`), password: PW }))));
    const won = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(isAuthError(r.reason, "auth.already_initialized")).toBe(true);
    for (const s of racers) expect(await s.countAdmins()).toBe(1);
  });

  it("two processes demoting the last two admins at once keep one", async () => {
    const other = await processStore();
    const [first] = (await store.list()).filter((u) => u.systemRole === "admin");
    const second = await store.create({ email: email("admin2"), password: PW, systemRole: "admin" });
    expect(await store.countAdmins()).toBe(2);
    expect(await other.countAdmins()).toBe(2); // connected
    // held until both demotions are inside their transactions: without the admins lock both would count two admins
    const results = await whileAccountsHeld(2, () => Promise.allSettled([store.setRole(first.id, "user"), other.setRole(second.id, "user")]));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const refusal = results.find((r): r is PromiseRejectedResult => r.status === "rejected")!;
    expect(isAuthError(refusal.reason, "auth.last_admin")).toBe(true);
    expect(await store.countAdmins()).toBe(1);
    const [last] = (await store.list()).filter((u) => u.systemRole === "admin");
    await expect(other.delete(last.id)).rejects.toMatchObject({ code: "auth.last_admin" });
    await expect(store.setRole("no-such-id", "user")).rejects.toMatchObject({ code: "auth.user_not_found" });
  });

  it("login throttle: 5 tries per (account, address) across processes, then locked; the lock runs out; a success clears", async () => {
    const other = await processStore();
    const account = email("throttled");
    const now = 1_000_000;
    // ten password checks started at once from two processes: five go ahead, five are refused
    const started = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? store : other).throttle.begin(account, "10.0.0.1", now)));
    expect(started.filter((ms) => ms === 0)).toHaveLength(MAX_LOGIN_FAILURES);
    for (const ms of started.filter((x) => x > 0)) expect(ms).toBe(LOCKOUT_MS);
    expect(await other.throttle.lockedFor(account, "10.0.0.1", now + 1000)).toBe(LOCKOUT_MS - 1000);
    expect(await store.throttle.begin(account, "10.0.0.2", now)).toBe(0); // another address is not locked
    // the lock runs out: a fresh count starts
    expect(await store.throttle.begin(account, "10.0.0.1", now + LOCKOUT_MS)).toBe(0);
    expect(await store.throttle.lockedFor(account, "10.0.0.1", now + LOCKOUT_MS)).toBe(0);
    await store.throttle.clear(account, "10.0.0.1");
    for (let i = 0; i < MAX_LOGIN_FAILURES - 1; i++) expect(await store.throttle.recordFailure(account, "10.0.0.1", now + LOCKOUT_MS + i)).toBe(0);
    expect(await store.throttle.recordFailure(account, "10.0.0.1", now + LOCKOUT_MS + 10)).toBe(LOCKOUT_MS);
  });

  it("a database that cannot be reached fails the call with a masked message, and the next call tries again", async () => {
    const url = new URL(fresh.url);
    url.password = "s3cret-pw";
    url.port = "1"; // nothing listens there
    const broken = new PgUserStore({ pool: () => openPgPool({ url: url.toString(), log }), ownsPool: true });
    const err = await broken.getById("x").catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("Cannot connect to PostgreSQL");
    expect((err as Error).message).not.toContain("s3cret-pw");
    await expect(broken.countAdmins()).rejects.toThrow(/Cannot connect/);
    await broken.close();
  });
});
