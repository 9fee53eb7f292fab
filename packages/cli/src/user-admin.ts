/**
 * The account store as the CLI uses it (`users`, `init`, `serve`, `doctor`):
 * the gateway's own `auth.db` in the data dir, opened for one command and
 * closed again. The running server reads the same file, so a change here
 * applies to it at once (a new password signs out every session).
 */
import { existsSync } from "node:fs";
import { loadAppConfig, silentConfigLogger } from "../../harness/src/config";
import { authDbPath, isAuthError, openUserStore, passwordProblem, resolveAuthSettings } from "../../server/src";
import type { AuthSettings, SystemRole, UserRecord, UserStore } from "../../server/src";
import type { CommonOptions } from "./common";

/** The email rule of the account store, checked before a password is asked for. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A refused account change, printed as `Error: …` with exit code 1. */
export class AccountRefusedError extends Error {}

/** Account operations of the CLI. */
export interface UserAdmin {
  find(email: string): UserRecord | undefined;
  list(): UserRecord[];
  countAdmins(): number;
  /** Why the store would refuse this password, or undefined. */
  passwordProblem(password: string): string | undefined;
  create(input: { email: string; password: string; systemRole: SystemRole }): Promise<UserRecord>;
  setPassword(id: string, password: string): Promise<void>;
  setRole(id: string, role: SystemRole): { ok: true } | { ok: false; message: string };
  tokenCount(userId: string): number;
  revokeTokens(userId: string): number;
  close(): void;
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

function wrap(store: UserStore): UserAdmin {
  return {
    find: (email) => store.getByEmail(email),
    list: () => store.list(),
    countAdmins: () => store.countAdmins(),
    passwordProblem,
    async create(input) {
      const email = checkEmail(input.email);
      return store.create({ email, password: input.password, systemRole: input.systemRole, needsSetup: false }).catch(refusalOf);
    },
    async setPassword(id, password) {
      await store.setPassword(id, password).catch(refusalOf);
    },
    setRole(id, role) {
      try {
        store.setRole(id, role);
        return { ok: true };
      } catch (err) {
        if (isAuthError(err, "auth.last_admin")) return { ok: false, message: err.message };
        return refusalOf(err);
      }
    },
    tokenCount: (userId) => store.tokens.list(userId).length,
    revokeTokens(userId) {
      let n = 0;
      for (const t of store.tokens.list(userId)) if (store.tokens.revoke(userId, t.id)) n++;
      return n;
    },
    close: () => store.close(),
  };
}

/** Open the account store of a data dir (created when missing). */
export async function loadUserAdmin(dataDir: string): Promise<UserAdmin> {
  return wrap(openUserStore(dataDir));
}

/** Whether the data dir has an account store (`auth.db`) yet. */
export function hasAccountStore(dataDir: string): boolean {
  return existsSync(authDbPath(dataDir));
}

/** A read-only view of a data dir that has no account store yet (nothing is created). */
export function emptyUserAdmin(): UserAdmin {
  const none = (): never => {
    throw new AccountRefusedError("this data dir has no accounts yet.");
  };
  return {
    find: () => undefined,
    list: () => [],
    countAdmins: () => 0,
    passwordProblem,
    create: async () => none(),
    setPassword: async () => none(),
    setRole: () => none(),
    tokenCount: () => 0,
    revokeTokens: () => 0,
    close: () => undefined,
  };
}

/** Accounts of a data dir without creating anything: `undefined` when it has no `auth.db` yet. */
export function peekAccounts(dataDir: string): { users: number; admins: number } | undefined {
  if (!hasAccountStore(dataDir)) return undefined;
  const store = openUserStore(dataDir);
  try {
    return { users: store.list().length, admins: store.countAdmins() };
  } finally {
    store.close();
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
