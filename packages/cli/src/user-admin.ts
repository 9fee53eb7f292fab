/**
 * The account store as the CLI uses it (`users`, `init`, `serve`, `doctor`):
 * the gateway's own store — `auth.db` in the data dir, or PostgreSQL when
 * the config says `database.backend: postgres` — opened for one command and
 * closed again. The running server reads the same store, so a change here
 * applies to it at once (a new password signs out every session).
 */
import { existsSync } from "node:fs";
import { loadAppConfig, silentConfigLogger } from "@deerflow-ts/harness/config";
import { authDbPath, isAuthError, openAccountStore, passwordProblem, resolveAuthSettings } from "@deerflow-ts/server";
import type { AccessTokenInfo, AccountDatabase, AccountStore, AuthSettings, SystemRole, TokenScope, UserRecord } from "@deerflow-ts/server";
import type { CommonOptions } from "./common";
import { peekPostgres } from "./postgres-peek";

/** The email rule of the account store, checked before a password is asked for. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A refused account change, printed as `Error: …` with exit code 1. */
export class AccountRefusedError extends Error {}

/** Account operations of the CLI. */
export interface UserAdmin {
  find(email: string): Promise<UserRecord | undefined>;
  list(): Promise<UserRecord[]>;
  countAdmins(): Promise<number>;
  /** Why the store would refuse this password, or undefined. */
  passwordProblem(password: string): string | undefined;
  create(input: { email: string; password: string; systemRole: SystemRole }): Promise<UserRecord>;
  setPassword(id: string, password: string): Promise<void>;
  setRole(id: string, role: SystemRole): Promise<{ ok: true } | { ok: false; message: string }>;
  tokenCount(userId: string): Promise<number>;
  revokeTokens(userId: string): Promise<number>;
  /** The account's personal access tokens, newest first (never their secrets). */
  listTokens(userId: string): Promise<AccessTokenInfo[]>;
  /** Mint a personal access token; its `secret` exists only in this answer. */
  createToken(userId: string, name: string, scopes: readonly TokenScope[]): Promise<AccessTokenInfo & { secret: string }>;
  /** Revoke one of the account's tokens; false when it has no such token. */
  revokeToken(userId: string, tokenId: string): Promise<boolean>;
  close(): Promise<void>;
}

function refusalOf(err: unknown): never {
  if (isAuthError(err)) throw new AccountRefusedError(err.message);
  throw err;
}

/** Check an email the way the account store does (before asking for a password). */
export function checkEmail(email: string): string {
  const e = email.trim();
  if (!EMAIL.test(e) || e.length > 320) throw new AccountRefusedError(`'${email}' is not an email address.`);
  return e;
}

function wrap(store: AccountStore): UserAdmin {
  return {
    find: async (email) => store.getByEmail(email),
    list: async () => store.list(),
    countAdmins: async () => store.countAdmins(),
    passwordProblem,
    async create(input) {
      const email = checkEmail(input.email);
      return store.create({ email, password: input.password, systemRole: input.systemRole, needsSetup: false }).catch(refusalOf);
    },
    async setPassword(id, password) {
      await store.setPassword(id, password).catch(refusalOf);
    },
    async setRole(id, role) {
      try {
        await store.setRole(id, role);
        return { ok: true };
      } catch (err) {
        if (isAuthError(err, "auth.last_admin")) return { ok: false, message: err.message };
        return refusalOf(err);
      }
    },
    tokenCount: async (userId) => (await store.tokens.list(userId)).length,
    async revokeTokens(userId) {
      let n = 0;
      for (const t of await store.tokens.list(userId)) if (await store.tokens.revoke(userId, t.id)) n++;
      return n;
    },
    listTokens: async (userId) => store.tokens.list(userId),
    createToken: async (userId, name, scopes) => Promise.resolve(store.tokens.create(userId, name, scopes)).catch(refusalOf),
    revokeToken: async (userId, tokenId) => store.tokens.revoke(userId, tokenId),
    close: async () => store.close(),
  };
}

/**
 * The `database:` section of the config a command would run with (the
 * accounts are in PostgreSQL when its backend is `postgres`); undefined when
 * there is no readable config (then `auth.db` in the data dir is meant).
 */
export function configuredDatabase(common: Pick<CommonOptions, "configPath" | "cwd">): AccountDatabase | undefined {
  try {
    const loaded = loadAppConfig({ path: common.configPath, cwd: common.cwd, logger: silentConfigLogger });
    return (loaded.config as { database?: AccountDatabase }).database ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Open the account store of a data dir (created when missing), or of the
 * PostgreSQL database the config of `common` names. Migrations run on first
 * use, so the first command against a fresh database creates the tables.
 */
export async function loadUserAdmin(dataDir: string, common?: Pick<CommonOptions, "configPath" | "cwd">): Promise<UserAdmin> {
  const database = common ? configuredDatabase(common) : undefined;
  return wrap(openAccountStore({ dataDir, database, log: (m) => console.error(`[deerflow] ${m}`) }));
}

/** Whether the data dir has an account store (`auth.db`) yet; a PostgreSQL store always exists (its tables come with the first use). */
export function hasAccountStore(dataDir: string, common?: Pick<CommonOptions, "configPath" | "cwd">): boolean {
  if (common && configuredDatabase(common)?.backend === "postgres") return true;
  return existsSync(authDbPath(dataDir));
}

/** A read-only view of a data dir that has no account store yet (nothing is created). */
export function emptyUserAdmin(): UserAdmin {
  const none = (): never => {
    throw new AccountRefusedError("this data dir has no accounts yet.");
  };
  return {
    find: async () => undefined,
    list: async () => [],
    countAdmins: async () => 0,
    passwordProblem,
    create: async () => none(),
    setPassword: async () => none(),
    setRole: async () => none(),
    tokenCount: async () => 0,
    revokeTokens: async () => 0,
    listTokens: async () => [],
    createToken: async () => none(),
    revokeToken: async () => false,
    close: async () => undefined,
  };
}

/**
 * How many accounts and admins the account store `database:` names has,
 * without creating anything: PostgreSQL's `auth_*` tables when the backend is
 * `postgres` (no file in the data dir is read; read-only, so no migration
 * runs), else the data dir's `auth.db` — `undefined` when it does not exist
 * yet (no `auth.db`, or no `auth_users` table). Rejects when the store cannot
 * be read (e.g. PostgreSQL is unreachable).
 */
export async function peekAccounts(dataDir: string, database?: AccountDatabase | null): Promise<{ users: number; admins: number } | undefined> {
  if (database?.backend === "postgres") return peekPostgresAccounts(database);
  if (!existsSync(authDbPath(dataDir))) return undefined;
  const store = openAccountStore({ dataDir, database, log: (m) => console.error(`[deerflow] ${m}`) });
  try {
    return { users: (await store.list()).length, admins: await store.countAdmins() };
  } finally {
    await store.close();
  }
}

/** {@link peekAccounts} on PostgreSQL: one count over `auth_users`, when that table exists. */
async function peekPostgresAccounts(database: AccountDatabase): Promise<{ users: number; admins: number } | undefined> {
  const peek = await peekPostgres(database);
  try {
    if (!(await peek.hasTable("auth_users"))) return undefined;
    const res = await peek.pool.query<{ users: number; admins: number }>(
      `SELECT count(*)::int AS users, (count(*) FILTER (WHERE system_role = 'admin'))::int AS admins FROM ${peek.name("auth_users")}`,
    );
    return { users: res.rows[0]?.users ?? 0, admins: res.rows[0]?.admins ?? 0 };
  } finally {
    await peek.close();
  }
}

/**
 * The effective auth settings of the config a command would run with, or the
 * reason they cannot be read. Loads `.env` first, as every command does.
 */
export function configuredAuth(common: Pick<CommonOptions, "configPath" | "cwd">): { settings?: AuthSettings; file?: string; error?: unknown } {
  try {
    const loaded = loadAppConfig({ path: common.configPath, cwd: common.cwd, logger: silentConfigLogger });
    return { settings: resolveAuthSettings(loaded.config.auth, process.env), file: loaded.path };
  } catch (error) {
    return { error };
  }
}

/** A note for account commands when the config they serve does not require sign-in (else undefined). */
export function authStateNote(common: Pick<CommonOptions, "configPath" | "cwd">): string | undefined {
  const { settings, file } = configuredAuth(common);
  if (!settings || settings.enabled) return undefined;
  if (settings.disabledBy === "env") return "Note: DEER_FLOW_AUTH_DISABLED=1 is set, so the server does not ask anyone to sign in; accounts apply once it is unset.";
  return (
    `Note: sign-in is off in ${file} (no \`auth.enabled: true\`), so the server does not ask anyone to sign in yet. ` +
    "Turn it on with `deerflow init` (answer yes to sign-in) or add `auth: {enabled: true, jwt_secret: $DEER_FLOW_JWT_SECRET}` and the secret to .env."
  );
}

/**
 * The note `run` and `chat` print under their thread line when the config
 * requires sign-in: they act as the local user `default`, which is no
 * account, so nobody who signs in to the web UI sees their threads.
 */
export function localUserNote(common: Pick<CommonOptions, "configPath" | "cwd">): string | undefined {
  if (!configuredAuth(common).settings?.enabled) return undefined;
  return "as the local user 'default' (sign-in is on: this thread is no account's, so the web UI does not list it; continue it here with --thread)";
}
