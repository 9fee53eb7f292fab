import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { AccountStore } from "./account-store";
import { AccessTokens } from "./access-tokens";
import { AuthError } from "./errors";
import { assertStrongPassword, hashPassword, verifyAgainstDummy, verifyPassword } from "./password";
import type { SystemRole } from "./request-user";
import { LoginThrottle } from "./login-throttle";

/** One account (never carries the password hash). */
export interface UserRecord {
  readonly id: string;
  readonly email: string;
  readonly systemRole: SystemRole;
  /** True until first-run setup finished (DeerFlow's `needs_setup`). */
  readonly needsSetup: boolean;
  /** `null` for local accounts, else the OIDC provider id. */
  readonly oauthProvider: string | null;
  readonly oauthSubject: string | null;
  /** Bumped on logout and password change: sessions signed with an older version are refused. */
  readonly tokenVersion: number;
  /** Whether the account has a local password (OIDC-only accounts do not). */
  readonly hasPassword: boolean;
  readonly createdAt: string;
}

/** Input of {@link UserStore.create}. */
export interface NewUser {
  email: string;
  /** A local password (checked: ≥ 8 characters, not a common one); absent for OIDC-only accounts. */
  password?: string;
  systemRole: SystemRole;
  needsSetup?: boolean;
  oauthProvider?: string | null;
  oauthSubject?: string | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  email_key TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  system_role TEXT NOT NULL CHECK (system_role IN ('admin', 'user')),
  needs_setup INTEGER NOT NULL DEFAULT 0,
  oauth_provider TEXT,
  oauth_subject TEXT,
  token_version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS users_oauth ON users(oauth_provider, oauth_subject) WHERE oauth_subject IS NOT NULL;
CREATE TABLE IF NOT EXISTS access_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE INDEX IF NOT EXISTS access_tokens_user ON access_tokens(user_id);
CREATE TABLE IF NOT EXISTS login_failures (
  account TEXT NOT NULL,
  address TEXT NOT NULL,
  failures INTEGER NOT NULL,
  locked_until INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (account, address)
);
`;

type Row = Record<string, unknown>;

const COLUMNS = "id, email, system_role, needs_setup, oauth_provider, oauth_subject, token_version, password_hash IS NOT NULL AS has_password, created_at";

function toUser(r: Row): UserRecord {
  return {
    id: r.id as string,
    email: r.email as string,
    systemRole: r.system_role as SystemRole,
    needsSetup: r.needs_setup === 1,
    oauthProvider: (r.oauth_provider as string | null) ?? null,
    oauthSubject: (r.oauth_subject as string | null) ?? null,
    tokenVersion: r.token_version as number,
    hasPassword: r.has_password === 1,
    createdAt: r.created_at as string,
  };
}

/** The case-insensitive identity of an email (`Alice@X.org` and `alice@x.org` are one account). */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * No whitespace, control (`Cc`: terminal escapes) or format (`Cf`: bidi overrides, zero-width) characters:
 * an address from a sign-in provider is shown in `deerflow users list`, the log and the Users page, where
 * those would rewrite the terminal or make it read as another address.
 */
const EMAIL = /^[^\s@\p{Cc}\p{Cf}]+@[^\s@\p{Cc}\p{Cf}]+$/u;

/** The trimmed email, or AuthError `auth.invalid_email` (both account stores check with this). */
export function checkedEmail(email: string): string {
  const e = email.trim();
  if (!EMAIL.test(e) || e.length > 320) throw new AuthError("auth.invalid_email", `${JSON.stringify(email)} is not an email address.`);
  return e;
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE" || (err as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/** The path of the accounts database in a data dir. */
export function authDbPath(dataDir: string): string {
  return path.join(dataDir, "auth.db");
}

/**
 * Accounts, personal access tokens and login failures in SQLite
 * (`{dataDir}/auth.db`, WAL). Several processes (gateways, the CLI) may open
 * it at once: every check-then-write runs in one `BEGIN IMMEDIATE`
 * transaction, so two concurrent `initialize` calls make one admin and two
 * demotions cannot remove the last one.
 */
export class UserStore implements AccountStore {
  /** Personal access tokens (`dfp_…`), stored as SHA-256 of the secret. */
  readonly tokens: AccessTokens;
  /** Failed-login counters shared by every process on this data dir. */
  readonly throttle: LoginThrottle;
  private readonly db: Database.Database;
  private readonly byId: Database.Statement;
  private readonly byEmail: Database.Statement;
  private readonly admins: Database.Statement;

  constructor(db: Database.Database) {
    this.db = db;
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma("foreign_keys = ON");
    db.exec(SCHEMA);
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM users WHERE id = ?`);
    this.byEmail = db.prepare(`SELECT ${COLUMNS} FROM users WHERE email_key = ?`);
    this.admins = db.prepare("SELECT COUNT(*) AS n FROM users WHERE system_role = 'admin'");
    this.tokens = new AccessTokens(db);
    this.throttle = new LoginThrottle(db);
  }

  /** Create an account. @throws AuthError `auth.email_exists`, `auth.weak_password`, `auth.invalid_email`. */
  async create(input: NewUser): Promise<UserRecord> {
    const hash = await this.hashChecked(input.password);
    return this.insert(input, hash, false);
  }

  /**
   * Create the first admin, atomically with the check that none exists (the
   * setup page's `initialize`). @throws AuthError `auth.already_initialized`.
   */
  async initializeAdmin(input: { email: string; password: string }): Promise<UserRecord> {
    const hash = await this.hashChecked(input.password);
    return this.insert({ email: input.email, systemRole: "admin", needsSetup: false }, hash, true);
  }

  private async hashChecked(password: string | undefined): Promise<string | null> {
    if (password === undefined) return null;
    assertStrongPassword(password);
    return hashPassword(password);
  }

  private insert(input: NewUser, hash: string | null, onlyIfNoAdmin: boolean): UserRecord {
    const email = checkedEmail(input.email);
    const id = randomUUID();
    const run = this.db.transaction(() => {
      if (onlyIfNoAdmin && this.countAdmins() > 0) throw new AuthError("auth.already_initialized", "System already initialized");
      this.db
        .prepare(
          "INSERT INTO users (id, email, email_key, password_hash, system_role, needs_setup, oauth_provider, oauth_subject, token_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
        )
        .run(id, email, emailKey(email), hash, input.systemRole, input.needsSetup ? 1 : 0, input.oauthProvider ?? null, input.oauthSubject ?? null, new Date().toISOString());
    });
    try {
      run.immediate();
    } catch (err) {
      if (isUniqueViolation(err)) {
        if (this.getByEmail(email)) throw new AuthError("auth.email_exists", "Email already registered");
        throw new AuthError("auth.email_exists", "This OIDC identity is already linked to an account");
      }
      throw err;
    }
    return this.getById(id)!;
  }

  /** The account with this id, if any (one indexed read; the auth middleware runs it per request). */
  getById(id: string): UserRecord | undefined {
    const r = this.byId.get(id) as Row | undefined;
    return r ? toUser(r) : undefined;
  }

  /** The account with this email, compared case-insensitively. */
  getByEmail(email: string): UserRecord | undefined {
    const r = this.byEmail.get(emailKey(email)) as Row | undefined;
    return r ? toUser(r) : undefined;
  }

  /** The account linked to an OIDC identity. */
  getByOauth(provider: string, subject: string): UserRecord | undefined {
    const r = this.db.prepare(`SELECT ${COLUMNS} FROM users WHERE oauth_provider = ? AND oauth_subject = ?`).get(provider, subject) as Row | undefined;
    return r ? toUser(r) : undefined;
  }

  /** Link an existing account to an OIDC identity. */
  linkOauth(id: string, provider: string, subject: string): UserRecord {
    this.mustChange(this.db.prepare("UPDATE users SET oauth_provider = ?, oauth_subject = ? WHERE id = ?").run(provider, subject, id).changes, id);
    return this.getById(id)!;
  }

  /** Every account, oldest first. */
  list(): UserRecord[] {
    return (this.db.prepare(`SELECT ${COLUMNS} FROM users ORDER BY created_at, id`).all() as Row[]).map(toUser);
  }

  /** How many admins exist (`needs_setup` of `setup-status` is "none"). */
  countAdmins(): number {
    return (this.admins.get() as { n: number }).n;
  }

  /**
   * Change an account's role. @throws AuthError `auth.last_admin` when it
   * would leave no admin, `auth.user_not_found`.
   */
  setRole(id: string, role: SystemRole): UserRecord {
    this.db
      .transaction(() => {
        const user = this.getById(id);
        if (!user) throw new AuthError("auth.user_not_found", `No user with id '${id}'.`);
        if (user.systemRole === "admin" && role !== "admin" && this.countAdmins() <= 1) {
          throw new AuthError("auth.last_admin", `${user.email} is the only admin; make another account admin first, so the server keeps someone who can manage it.`);
        }
        this.db.prepare("UPDATE users SET system_role = ? WHERE id = ?").run(role, id);
      })
      .immediate();
    return this.getById(id)!;
  }

  /** Delete an account (its tokens go with it). @throws AuthError `auth.last_admin`, `auth.user_not_found`. */
  delete(id: string): void {
    this.db
      .transaction(() => {
        const user = this.getById(id);
        if (!user) throw new AuthError("auth.user_not_found", `No user with id '${id}'.`);
        if (user.systemRole === "admin" && this.countAdmins() <= 1) {
          throw new AuthError("auth.last_admin", `${user.email} is the only admin and cannot be deleted; make another account admin first.`);
        }
        this.db.prepare("DELETE FROM users WHERE id = ?").run(id);
      })
      .immediate();
  }

  /**
   * Set a new local password and bump the token version, which signs out
   * every session of the account at once. Returns the new version.
   */
  async setPassword(id: string, newPassword: string): Promise<number> {
    const hash = await this.hashChecked(newPassword);
    return this.db
      .transaction(() => {
        this.mustChange(this.db.prepare("UPDATE users SET password_hash = ?, token_version = token_version + 1 WHERE id = ?").run(hash, id).changes, id);
        return this.getById(id)!.tokenVersion;
      })
      .immediate();
  }

  /** Revoke every session of the account (logout). Returns the new version. */
  bumpTokenVersion(id: string): number {
    const r = this.db.prepare("UPDATE users SET token_version = token_version + 1 WHERE id = ? RETURNING token_version").get(id) as { token_version: number } | undefined;
    if (!r) throw new AuthError("auth.user_not_found", `No user with id '${id}'.`);
    return r.token_version;
  }

  /** Change the email (and optionally finish first-run setup). @throws AuthError `auth.email_exists`. */
  setEmail(id: string, email: string, opts: { completeSetup?: boolean } = {}): UserRecord {
    const e = checkedEmail(email);
    try {
      const sql = opts.completeSetup ? "UPDATE users SET email = ?, email_key = ?, needs_setup = 0 WHERE id = ?" : "UPDATE users SET email = ?, email_key = ? WHERE id = ?";
      this.mustChange(this.db.prepare(sql).run(e, emailKey(e), id).changes, id);
    } catch (err) {
      if (isUniqueViolation(err)) throw new AuthError("auth.email_exists", "Email already in use");
      throw err;
    }
    return this.getById(id)!;
  }

  /**
   * The account when `password` is its local password, else `null`. An
   * unknown email, an account without a password and a wrong password cost
   * the same scrypt work and give the same answer.
   */
  async verifyCredentials(email: string, password: string): Promise<UserRecord | null> {
    const r = this.db.prepare("SELECT id, password_hash FROM users WHERE email_key = ?").get(emailKey(email)) as { id: string; password_hash: string | null } | undefined;
    if (!r?.password_hash) return verifyAgainstDummy(password).then(() => null);
    if (!(await verifyPassword(password, r.password_hash))) return null;
    return this.getById(r.id) ?? null;
  }

  /** Whether `password` is the account's current local password (change-password's check). */
  async checkPassword(id: string, password: string): Promise<boolean> {
    const r = this.db.prepare("SELECT password_hash FROM users WHERE id = ?").get(id) as { password_hash: string | null } | undefined;
    if (!r?.password_hash) return verifyAgainstDummy(password);
    return verifyPassword(password, r.password_hash);
  }

  private mustChange(changes: number, id: string): void {
    if (changes === 0) throw new AuthError("auth.user_not_found", `No user with id '${id}'.`);
  }

  /** Close the database. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Open (creating if needed) `{dataDir}/auth.db`. The file holds password and
 * token hashes, so it is readable by the service's user only (mode 0600, also
 * when an older file was more open); SQLite gives its `-wal` and `-shm`
 * files the same mode.
 */
export function openUserStore(dataDir: string): UserStore {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = authDbPath(dataDir);
  fs.closeSync(fs.openSync(file, "a", 0o600));
  fs.chmodSync(file, 0o600);
  return new UserStore(new Database(file));
}
