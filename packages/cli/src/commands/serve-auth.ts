/**
 * Sign-in for `deerflow serve`: the settings it starts with (which decide
 * whether a non-loopback `--host` is allowed), the settings it hands the
 * gateway while config.yaml is edited under it, and the start banner.
 */
import type { AppConfig } from "@deerflow-ts/harness/config";
import { resolveAuthSettings } from "@deerflow-ts/server";
import type { AccountDatabase, AuthSection, AuthSettings } from "@deerflow-ts/server";
import { errorMessage } from "@deerflow-ts/harness/errors";
import { maskCredentials } from "@deerflow-ts/harness/postgres";
import { peekAccounts } from "../user-admin";

/** Why sign-in is off, in the words of the fix. */
export function authOffReason(settings: AuthSettings): string {
  return settings.disabledBy === "env"
    ? "DEER_FLOW_AUTH_DISABLED=1 is set, which turns it off whatever config.yaml says"
    : "the config has no `auth.enabled: true`";
}

const NO_SECTION: AuthSection = Object.freeze({});

/**
 * The `auth:` section the gateway reads (per request; it re-resolves the
 * settings only when the section object changes): the runtime's current
 * config, so an edit of config.yaml applies without a restart, and a broken
 * edit makes the gateway answer 503 with the reason.
 *
 * When the bind address is reachable from other machines only because sign-in
 * is on (`pinnedOn`), an edit that turns sign-in off keeps the last section
 * that had it on: a hot reload must not open the agent to the network.
 * Restarting `serve` applies the new rule (and its host check).
 */
export function liveAuthSection(opts: {
  config: () => AppConfig | undefined;
  pinnedOn: boolean;
  env?: Record<string, string | undefined>;
  log: (message: string) => void;
}): () => AuthSection {
  const env = opts.env ?? process.env;
  // one object for "no section", so the gateway's per-section cache holds without a config
  const current = (): AuthSection => opts.config()?.auth ?? NO_SECTION;
  const initial = current();
  if (!opts.pinnedOn) return current;
  let lastOn = initial;
  let seen = initial;
  let turnsOff = false;
  return () => {
    const section = current();
    if (section !== seen) {
      seen = section;
      try {
        turnsOff = !resolveAuthSettings(section, env).enabled;
      } catch {
        // enabled but broken: the gateway refuses requests with the reason (503), it does not open up
        turnsOff = false;
      }
      if (turnsOff) opts.log("[deerflow] config.yaml now turns sign-in off, but this server listens beyond loopback because sign-in was on: it stays on until `deerflow serve` restarts.");
      else lastOn = section;
    }
    return turnsOff ? lastOn : section;
  };
}

/**
 * The lines `serve` prints about sign-in once it listens on `url`, with the
 * accounts counted in the store the config's `database:` names (PostgreSQL
 * or the data dir's `auth.db`).
 */
export async function signInBanner(settings: AuthSettings, dataDir: string, url: string, database?: AccountDatabase | null): Promise<string[]> {
  if (!settings.enabled) return [`Sign-in: off (${authOffReason(settings)}); every request acts as the local default admin.`];
  const open = settings.registrationEnabled ? "; anyone who can reach it may register" : "";
  let accounts: { users: number; admins: number };
  try {
    accounts = (await peekAccounts(dataDir, database)) ?? { users: 0, admins: 0 };
  } catch (err) {
    const why = database?.postgres_url ? maskCredentials(errorMessage(err), database.postgres_url) : errorMessage(err);
    return [`Sign-in: required${open}; the accounts could not be read: ${why}`];
  }
  const lines = [`Sign-in: required (${accounts.users} account(s), ${accounts.admins} admin(s)${open}).`];
  if (accounts.admins === 0) lines.push(`No admin yet: open ${url}/setup to create one (or run \`deerflow users add EMAIL --admin\`).`);
  return lines;
}
