import { existsSync, readFileSync, statSync } from "node:fs";
import type { AppConfig } from "@deerflow-ts/harness/config";
import { envReferenceName } from "@deerflow-ts/harness/config";
import { errorMessage } from "@deerflow-ts/harness/errors";
import { maskCredentials } from "@deerflow-ts/harness/postgres";
import { authDbPath, resolveAuthSettings } from "@deerflow-ts/server";
import type { AccountDatabase } from "@deerflow-ts/server";
import { peekAccounts } from "../user-admin";
import type { Finding } from "./doctor";
import { DEFAULT_SERVE_URL, dotEnvHasValue, JWT_SECRET_VAR } from "./init-auth";

/** Inputs of {@link authFindings}. */
export interface AuthCheckInput {
  config: AppConfig;
  /** `auth.jwt_secret` as written in config.yaml (before `$VAR` substitution). */
  rawJwtSecret: unknown;
  /** The environment with the `.env` files loaded. */
  env: Record<string, string | undefined>;
  dataDir: string;
  /** The `.env` files that were read. */
  envFiles: string[];
}

/**
 * The `auth` line of `deerflow doctor`: disabled (and by what), or enabled
 * with the secret's state, how many accounts and whether an admin exists.
 * Also flags a secret written into config.yaml itself and a `.env` holding it
 * that other users can read. The accounts are counted in the store the
 * config's `database:` names (PostgreSQL or `auth.db`).
 */
export async function authFindings(input: AuthCheckInput): Promise<Finding[]> {
  const section = input.config.auth;
  let settings;
  try {
    settings = resolveAuthSettings(section, input.env);
  } catch (err) {
    return [{ check: "auth", level: "error", message: `enabled, but ${(err as Error).message}`, fix: `Run \`deerflow init --auth\` (it generates ${JWT_SECRET_VAR} into .env), or set auth.jwt_secret.` }];
  }
  if (!settings.enabled) {
    if (settings.disabledBy === "env" && section?.enabled) {
      return [{ check: "auth", level: "warn", message: "auth.enabled is true, but DEER_FLOW_AUTH_DISABLED=1 turns sign-in off: every request acts as the local default admin", fix: "Unset DEER_FLOW_AUTH_DISABLED to require sign-in." }];
    }
    const by = settings.disabledBy === "env" ? "DEER_FLOW_AUTH_DISABLED=1" : "no auth.enabled: true";
    return [{ check: "auth", level: "ok", message: `disabled (${by}): every request acts as the local default admin; fine while \`deerflow serve\` listens on 127.0.0.1 only` }];
  }
  const out: Finding[] = [];
  const secret = `enabled: secret set (${settings.jwtSecret!.length} characters, at least 32)`;
  const database = (input.config as { database?: AccountDatabase }).database;
  let accounts: { users: number; admins: number } | undefined;
  try {
    accounts = await peekAccounts(input.dataDir, database);
    // A fresh PostgreSQL database has no account tables; the doctor only looks (it creates and migrates nothing).
    if (!accounts && database?.backend === "postgres") {
      out.push({
        check: "auth",
        level: "warn",
        message: `${secret}; accounts: not initialised yet (tables are created at first \`serve\`)`,
        fix: `Start \`deerflow serve\` and open ${DEFAULT_SERVE_URL}/setup to create the first admin, or run \`deerflow users add EMAIL --admin\` (either creates the tables).`,
      });
    } else accounts ??= { users: 0, admins: 0 };
  } catch (err) {
    const url = database?.postgres_url;
    const why = url ? maskCredentials(errorMessage(err), url) : errorMessage(err);
    out.push({ check: "auth", level: "error", message: `${secret}, but the accounts could not be read: ${why}`, fix: "Check database.postgres_url and that PostgreSQL is reachable (see the postgres line)." });
  }
  if (accounts) {
    const summary = `${secret}, ${accounts.users} account(s), ${accounts.admins} admin(s)${settings.registrationEnabled ? ", self-registration open" : ""}`;
    if (accounts.admins === 0) {
      out.push({ check: "auth", level: "warn", message: `${summary}; no admin yet`, fix: `Start \`deerflow serve\` and open ${DEFAULT_SERVE_URL}/setup, or run \`deerflow users add EMAIL --admin\`.` });
    } else {
      out.push({ check: "auth", level: "ok", message: `${summary}; admin exists` });
    }
  }
  const stranded = await strandedSqliteAccounts(input.dataDir, database);
  if (stranded) out.push(stranded);
  if (typeof input.rawJwtSecret === "string" && !envReferenceName(input.rawJwtSecret)) {
    out.push({ check: "auth", level: "warn", message: "auth.jwt_secret is written in config.yaml itself", fix: `Move it to .env as ${JWT_SECRET_VAR}=… and write \`jwt_secret: $${JWT_SECRET_VAR}\` (config.yaml is often shared or committed).` });
  }
  for (const file of input.envFiles) {
    if (!existsSync(file) || !dotEnvHasValue(readFileSync(file, "utf8"), JWT_SECRET_VAR)) continue;
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) {
      out.push({ check: "auth", level: "warn", message: `${file} holds ${JWT_SECRET_VAR} and other users can read it (mode ${mode.toString(8).padStart(3, "0")})`, fix: `chmod 600 ${file}` });
    }
  }
  return out;
}

/**
 * On `database.backend: postgres` the accounts are read from PostgreSQL only,
 * so accounts made before the switch (`deerflow init --auth` writes the first
 * admin to `auth.db` while the config has no `database:` yet) silently stop
 * counting. Name them, so "no admin yet" is not a mystery.
 */
async function strandedSqliteAccounts(dataDir: string, database: AccountDatabase | undefined): Promise<Finding | undefined> {
  if (database?.backend !== "postgres" || !existsSync(authDbPath(dataDir))) return undefined;
  let old: { users: number; admins: number } | undefined;
  try {
    old = await peekAccounts(dataDir, undefined);
  } catch {
    return undefined;
  }
  if (!old?.users) return undefined;
  return {
    check: "auth",
    level: "warn",
    message: `${authDbPath(dataDir)} holds ${old.users} account(s) (${old.admins} admin(s)) of the SQLite backend; with database.backend: postgres only PostgreSQL's accounts sign in, that file is not read`,
    fix: "Add the accounts again on PostgreSQL with `deerflow users add EMAIL [--admin]` (passwords are not copied), then delete the file.",
  };
}
