import { HttpError } from "../http-error";
import { authDisabledUser } from "./auth-disabled";
import { TrustedProxies } from "./client-address";
import type { RequestUser } from "./request-user";
import type { AuthSection, AuthSettings } from "./settings";
import { resolveAuthSettings } from "./settings";
import type { Pool } from "pg";
import type { AccountStore } from "./account-store";
import { openAccountStore } from "./open-account-store";
import type { AccountDatabase } from "./open-account-store";

/** What {@link AuthRuntime} is built from (the gateway's options and config). */
export interface AuthRuntimeOptions {
  /** The `auth:` section as of now (config.yaml can change under a running gateway), or resolved settings (tests, embedding). */
  section: () => AuthSection | AuthSettings | null | undefined;
  /** Where `auth.db` lives (the gateway's data dir). */
  dataDir: string;
  /** `database:` as of now: with `backend: postgres` the accounts live in PostgreSQL, not `auth.db`. */
  database?: () => AccountDatabase | null | undefined;
  /** The process's PostgreSQL pool to share (else the store opens its own at `database.postgres_url`). */
  pool?: () => Pool | Promise<Pool>;
  /** An open store to use instead of the configured one (left open on close). */
  store?: AccountStore;
  /** Clock in ms (tests move it to run out lockouts and sessions). */
  now?: () => number;
  /** `AUTH_TRUSTED_PROXIES`. */
  trustedProxies?: string;
  /** The id of the synthetic user in auth-disabled mode. */
  disabledUserId?: string;
  log: (message: string) => void;
  env?: Record<string, string | undefined>;
}

function isResolved(v: unknown): v is AuthSettings {
  return typeof v === "object" && v !== null && "registrationEnabled" in v && "jwtSecret" in v;
}

/**
 * The gateway's sign-in state: the effective settings (re-resolved when the
 * config's `auth:` section changes), the account store (opened on first
 * use, so an auth-disabled gateway never creates `auth.db`), the clock and
 * the trusted proxies.
 */
export class AuthRuntime {
  readonly proxies: TrustedProxies;
  readonly disabledUser: RequestUser;
  private readonly opts: AuthRuntimeOptions;
  private store?: AccountStore;
  private readonly ownsStore: boolean;
  private last?: { section: unknown; settings?: AuthSettings; error?: Error };

  constructor(opts: AuthRuntimeOptions) {
    this.opts = opts;
    this.store = opts.store;
    this.ownsStore = !opts.store;
    this.proxies = new TrustedProxies(opts.trustedProxies);
    for (const bad of this.proxies.invalid) opts.log(`[gateway] AUTH_TRUSTED_PROXIES: '${bad}' is not an IP address or CIDR; ignored`);
    this.disabledUser = authDisabledUser(opts.disabledUserId);
  }

  /**
   * The settings as of now. A config edit that breaks them (auth enabled
   * without a secret) makes requests fail with 503 and the reason logged,
   * rather than serving with auth silently off.
   */
  settings(): AuthSettings {
    const section = this.opts.section();
    if (this.last && this.last.section === section) {
      if (this.last.error) throw new HttpError(503, `Sign-in is misconfigured: ${this.last.error.message}`);
      return this.last.settings!;
    }
    try {
      const settings = isResolved(section) ? section : resolveAuthSettings(section, this.opts.env ?? process.env);
      this.last = { section, settings };
      return settings;
    } catch (err) {
      this.last = { section, error: err as Error };
      this.opts.log(`[gateway] ${(err as Error).message}`);
      throw new HttpError(503, `Sign-in is misconfigured: ${(err as Error).message}`);
    }
  }

  /** Resolve the settings now, throwing the configuration error itself (gateway start-up). */
  check(): AuthSettings {
    const section = this.opts.section();
    const settings = isResolved(section) ? section : resolveAuthSettings(section, this.opts.env ?? process.env);
    this.last = { section, settings };
    return settings;
  }

  /** The account store (`{dataDir}/auth.db`, or PostgreSQL per `database:`). */
  users(): AccountStore {
    this.store ??= openAccountStore({ dataDir: this.opts.dataDir, database: this.opts.database?.(), pool: this.opts.pool, log: this.opts.log });
    return this.store;
  }

  /** Current time in ms. */
  now(): number {
    return this.opts.now ? this.opts.now() : Date.now();
  }

  /** Close the store if this runtime opened it. */
  async close(): Promise<void> {
    if (!this.ownsStore) return;
    const store = this.store;
    this.store = undefined;
    await store?.close();
  }
}
