/**
 * Sign-in for `deerflow serve`: the settings it starts with (which decide
 * whether a non-loopback `--host` is allowed), the settings it hands the
 * gateway while config.yaml is edited under it, and the start banner.
 */
import type { AppConfig } from "../../../harness/src/config";
import { resolveAuthSettings } from "../../../server/src";
import type { AuthSettings } from "../../../server/src";
import { peekAccounts } from "../user-admin";

/** Why sign-in is off, in the words of the fix. */
export function authOffReason(settings: AuthSettings): string {
  return settings.disabledBy === "env"
    ? "DEER_FLOW_AUTH_DISABLED=1 is set, which turns it off whatever config.yaml says"
    : "config.yaml has no `auth.enabled: true`";
}

/**
 * The auth settings the gateway asks for (per request): those of the
 * runtime's current config, recomputed only when the config object changed.
 *
 * When the bind address is reachable from other machines only because sign-in
 * is on (`pinnedOn`), an edit of config.yaml that turns it off, or breaks it,
 * keeps the last settings that had it on: a hot reload must not open the
 * agent to the network. Restarting `serve` applies the new rule (and its
 * host check).
 */
export function liveAuthSettings(opts: {
  config: () => AppConfig | undefined;
  initial: AuthSettings;
  pinnedOn: boolean;
  env?: Record<string, string | undefined>;
  log: (message: string) => void;
}): () => AuthSettings {
  const env = opts.env ?? process.env;
  let lastConfig: AppConfig | undefined | null = null;
  let current = opts.initial;
  let warned = false;
  return () => {
    const config = opts.config();
    if (config === lastConfig) return current;
    lastConfig = config;
    let next: AuthSettings;
    try {
      next = resolveAuthSettings(config?.auth, env);
    } catch (err) {
      opts.log(`[deerflow] config.yaml's auth section is invalid, sign-in keeps its previous settings: ${(err as Error).message}`);
      return current;
    }
    if (opts.pinnedOn && !next.enabled) {
      if (!warned) opts.log("[deerflow] config.yaml now turns sign-in off, but this server listens beyond loopback because sign-in was on: it stays on until `deerflow serve` restarts.");
      warned = true;
      return current;
    }
    current = next;
    return current;
  };
}

/** The lines `serve` prints about sign-in once it listens on `url`. */
export function signInBanner(settings: AuthSettings, dataDir: string, url: string): string[] {
  if (!settings.enabled) return [`Sign-in: off (${authOffReason(settings)}); every request acts as the local default admin.`];
  const accounts = peekAccounts(dataDir) ?? { users: 0, admins: 0 };
  const lines = [`Sign-in: required (${accounts.users} account(s), ${accounts.admins} admin(s)${settings.registrationEnabled ? "; anyone who can reach it may register" : ""}).`];
  if (accounts.admins === 0) lines.push(`No admin yet: open ${url}/setup to create one (or run \`deerflow users add EMAIL --admin\`).`);
  return lines;
}
