import { randomUUID } from "node:crypto";
import { runMigrations } from "@deerflow-ts/harness";
import type { Pool, PoolClient } from "pg";
import type { AccountStore } from "./account-store";
import { AuthError } from "./errors";
import { assertStrongPassword, hashPassword, verifyAgainstDummy, verifyPassword } from "./password";
import { AUTH_COMPONENT, AUTH_MIGRATIONS, inTransaction, sqlState } from "./pg-auth-schema";
import { PgAccessTokens } from "./pg-access-tokens";
import { PgLoginThrottle } from "./pg-login-throttle";
import type { SystemRole } from "./request-user";
import { checkedEmail, emailKey } from "./user-store";
import type { NewUser, UserRecord } from "./user-store";

const COLUMNS = "id, email, system_role, needs_setup, oauth_provider, oauth_subject, token_version, password_hash IS NOT NULL AS has_password, created_at";

type Row = Record<string, unknown>;

function toUser(r: Row): UserRecord {
  return {
    id: r.id as string,
    email: r.email as string,
    systemRole: r.system_role as SystemRole,
    needsSetup: r.needs_setup === true,
    oauthProvider: (r.oauth_provider as string | null) ?? null,
    oauthSubject: (r.oauth_subject as string | null) ?? null,
    tokenVersion: Number(r.token_version),
    hasPassword: r.has_password === true,
    createdAt: r.created_at as string,
  };
}

/**
 * Every change that can alter how many admins exist (the first admin at
 * initialize, a demotion, a deletion) takes this transaction-scoped
 * advisory lock before counting, so processes racing on one database count
 * one after the other: exactly one admin comes out of concurrent
 * initializes, and the last admin cannot be removed by two demotions at once.
 * (Row locks cannot do this: there is no row to lock while no admin exists.)
 */
const ADMINS_LOCK = "SELECT pg_advisory_xact_lock(hashtext('deerflow.auth.admins'), 1)";

/** How the store reaches its database: the process's shared pool, or its own. */
export interface PgUserStoreOptions {
  /** The pool, e.g. the runtime's storage pool, or how to open one (called on first use). */
  pool: Pool | (() => Promise<Pool>);
  /** End the pool on close (true when the store opened it). */
  ownsPool?: boolean;
}

/**
 * Accounts, personal access tokens and login failures in PostgreSQL
 * (`database.backend: postgres`): the tables `auth_users`,
 * `auth_access_tokens`, `auth_login_failures`, created by the `auth`
 * migrations on first use. Same API and guarantees as the SQLite
 * {@link UserStore}; a database that cannot be reached fails the request
 * that needed it and is tried again by the next one.
 */
export class PgUserStore implements AccountStore {
  readonly tokens: PgAccessTokens;
  readonly throttle: PgLoginThrottle;
  private readonly poolSource: Pool | (() => Promise<Pool>);
  private readonly ownsPool: boolean;
  private opened?: Promise<Pool>;
  private ready?: Promise<Pool>;
  private closed = false;

  constructor(options: PgUserStoreOptions) {
    this.poolSource = options.pool;
    this.ownsPool = options.ownsPool ?? false;
    const db = () => this.db();
    this.tokens = new PgAccessTokens(db);
    this.throttle = new PgLoginThrottle(db);
  }

  /** The pool, once the `auth` migrations have run (a failed attempt is retried by the next call). */
  db(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error("The account store is closed."));
    this.ready ??= (async () => {
      const source = this.poolSource;
      this.opened ??= typeof source === "function" ? source() : Promise.resolve(source);
      const pool = await this.opened.catch((err: unknown) => {
        this.opened = undefined;
        throw err;
      });
      await runMigrations(pool, AUTH_COMPONENT, AUTH_MIGRATIONS);
      return pool;
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async one(sql: string, params: unknown[]): Promise<UserRecord | undefined> {
    const r = await (await this.db()).query(sql, params);
    return r.rows[0] ? toUser(r.rows[0]) : undefined;
  }

  async create(input: NewUser): Promise<UserRecord> {
    const hash = await this.hashChecked(input.password);
    return this.insert(input, hash, false);
  }

  async initializeAdmin(input: { email: string; password: string }): Promise<UserRecord> {
    const hash = await this.hashChecked(input.password);
    return this.insert({ email: input.email, systemRole: "admin", needsSetup: false }, hash, true);
  }

  private async hashChecked(password: string | undefined): Promise<string | null> {
    if (password === undefined) return null;
    assertStrongPassword(password);
    return hashPassword(password);
  }

  private async insert(input: NewUser, hash: string | null, onlyIfNoAdmin: boolean): Promise<UserRecord> {
    const email = checkedEmail(input.email);
    const id = randomUUID();
    try {
      const row = await inTransaction(await this.db(), async (c) => {
        if (onlyIfNoAdmin || input.systemRole === "admin") await c.query(ADMINS_LOCK);
        if (onlyIfNoAdmin && (await countAdmins(c)) > 0) throw new AuthError("auth.already_initialized", "System already initialized");
        const r = await c.query(
          `INSERT INTO auth_users (id, email, email_key, password_hash, system_role, needs_setup, oauth_provider, oauth_subject, token_version, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9) RETURNING ${COLUMNS}`,
          [id, email, emailKey(email), hash, input.systemRole, input.needsSetup === true, input.oauthProvider ?? null, input.oauthSubject ?? null, new Date().toISOString()],
        );
        return r.rows[0] as Row;
      });
      return toUser(row);
    } catch (err) {
      if (sqlState(err) === "23505") {
        if ((err as { constraint?: string }).constraint === "auth_users_email_key") throw new AuthError("auth.email_exists", "Email already registered");
        throw new AuthError("auth.email_exists", "This OIDC identity is already linked to an account");
      }
      throw err;
    }
  }

  getById(id: string): Promise<UserRecord | undefined> {
    return this.one(`SELECT ${COLUMNS} FROM auth_users WHERE id = $1`, [id]);
  }

  getByEmail(email: string): Promise<UserRecord | undefined> {
    return this.one(`SELECT ${COLUMNS} FROM auth_users WHERE email_key = $1`, [emailKey(email)]);
  }

  getByOauth(provider: string, subject: string): Promise<UserRecord | undefined> {
    return this.one(`SELECT ${COLUMNS} FROM auth_users WHERE oauth_provider = $1 AND oauth_subject = $2`, [provider, subject]);
  }

  async linkOauth(id: string, provider: string, subject: string): Promise<UserRecord> {
    const user = await this.one(`UPDATE auth_users SET oauth_provider = $1, oauth_subject = $2 WHERE id = $3 RETURNING ${COLUMNS}`, [provider, subject, id]);
    return user ?? notFound(id);
  }

  async list(): Promise<UserRecord[]> {
    const r = await (await this.db()).query(`SELECT ${COLUMNS} FROM auth_users ORDER BY created_at, id`);
    return r.rows.map(toUser);
  }

  async countAdmins(): Promise<number> {
    const pool = await this.db();
    const r = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM auth_users WHERE system_role = 'admin'");
    return r.rows[0].n;
  }

  async setRole(id: string, role: SystemRole): Promise<UserRecord> {
    const row = await inTransaction(await this.db(), async (c) => {
      await c.query(ADMINS_LOCK);
      const user = await userFor(c, id);
      if (user.systemRole === "admin" && role !== "admin" && (await countAdmins(c)) <= 1) {
        throw new AuthError("auth.last_admin", `${user.email} is the only admin; make another account admin first, so the server keeps someone who can manage it.`);
      }
      return (await c.query(`UPDATE auth_users SET system_role = $1 WHERE id = $2 RETURNING ${COLUMNS}`, [role, id])).rows[0] as Row;
    });
    return toUser(row);
  }

  async delete(id: string): Promise<void> {
    await inTransaction(await this.db(), async (c) => {
      await c.query(ADMINS_LOCK);
      const user = await userFor(c, id);
      if (user.systemRole === "admin" && (await countAdmins(c)) <= 1) {
        throw new AuthError("auth.last_admin", `${user.email} is the only admin and cannot be deleted; make another account admin first.`);
      }
      await c.query("DELETE FROM auth_users WHERE id = $1", [id]);
    });
  }

  async setPassword(id: string, newPassword: string): Promise<number> {
    const hash = await this.hashChecked(newPassword);
    const r = await (await this.db()).query<{ token_version: number }>("UPDATE auth_users SET password_hash = $1, token_version = token_version + 1 WHERE id = $2 RETURNING token_version", [hash, id]);
    if (!r.rows[0]) notFound(id);
    return Number(r.rows[0].token_version);
  }

  async bumpTokenVersion(id: string): Promise<number> {
    const r = await (await this.db()).query<{ token_version: number }>("UPDATE auth_users SET token_version = token_version + 1 WHERE id = $1 RETURNING token_version", [id]);
    if (!r.rows[0]) notFound(id);
    return Number(r.rows[0].token_version);
  }

  async setEmail(id: string, email: string, opts: { completeSetup?: boolean } = {}): Promise<UserRecord> {
    const e = checkedEmail(email);
    const set = opts.completeSetup ? "email = $1, email_key = $2, needs_setup = false" : "email = $1, email_key = $2";
    try {
      return (await this.one(`UPDATE auth_users SET ${set} WHERE id = $3 RETURNING ${COLUMNS}`, [e, emailKey(e), id])) ?? notFound(id);
    } catch (err) {
      if (sqlState(err) === "23505") throw new AuthError("auth.email_exists", "Email already in use");
      throw err;
    }
  }

  async verifyCredentials(email: string, password: string): Promise<UserRecord | null> {
    const r = await (await this.db()).query<{ id: string; password_hash: string | null }>("SELECT id, password_hash FROM auth_users WHERE email_key = $1", [emailKey(email)]);
    const row = r.rows[0];
    if (!row?.password_hash) return verifyAgainstDummy(password).then(() => null);
    if (!(await verifyPassword(password, row.password_hash))) return null;
    return (await this.getById(row.id)) ?? null;
  }

  async checkPassword(id: string, password: string): Promise<boolean> {
    const r = await (await this.db()).query<{ password_hash: string | null }>("SELECT password_hash FROM auth_users WHERE id = $1", [id]);
    const hash = r.rows[0]?.password_hash;
    if (!hash) return verifyAgainstDummy(password);
    return verifyPassword(password, hash);
  }

  /** Stop using the database (ends the pool when this store opened it). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const opened = this.opened;
    if (this.ownsPool && opened) await (await opened.catch(() => undefined))?.end();
  }
}

function notFound(id: string): never {
  throw new AuthError("auth.user_not_found", `No user with id '${id}'.`);
}

async function countAdmins(c: PoolClient): Promise<number> {
  return (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM auth_users WHERE system_role = 'admin'")).rows[0].n;
}

async function userFor(c: PoolClient, id: string): Promise<UserRecord> {
  const r = await c.query(`SELECT ${COLUMNS} FROM auth_users WHERE id = $1 FOR UPDATE`, [id]);
  return r.rows[0] ? toUser(r.rows[0]) : notFound(id);
}
