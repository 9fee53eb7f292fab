import { ConfigError } from "@deerflow-ts/harness";
import type { AppConfig } from "@deerflow-ts/harness";

/** The `auth:` section of config.yaml as parsed (or a hand-written subset of it in tests and embedding). */
export interface AuthSection {
  enabled?: boolean | null;
  jwt_secret?: string | null;
  registration_enabled?: boolean | null;
  session_days?: number | null;
  /** DeerFlow's spelling of `registration_enabled` (ours wins). */
  local?: { allow_registration?: boolean | null } | null;
  oidc?: Partial<OidcSettings> | null;
}

/** OIDC part of the settings (the OIDC sign-in reads it). */
export type OidcSettings = NonNullable<AppConfig["auth"]>["oidc"];

/** What the gateway's sign-in machinery runs on. */
export interface AuthSettings {
  /** Accounts, sessions and CSRF are enforced. False = auth-disabled mode (every request is the default admin). */
  readonly enabled: boolean;
  /** Why auth is off: `env` (`DEER_FLOW_AUTH_DISABLED=1`) or `config` (no `auth.enabled: true`). */
  readonly disabledBy?: "env" | "config";
  /** HS256 key of the session JWT (set whenever `enabled`). */
  readonly jwtSecret: string | null;
  /** May visitors self-register `user` accounts (`POST /api/v1/auth/register`)? */
  readonly registrationEnabled: boolean;
  /** Session lifetime in days (`expires_in` = `sessionDays`·86400). */
  readonly sessionDays: number;
  readonly oidc: OidcSettings;
}

const NO_OIDC: OidcSettings = { enabled: false, frontend_base_url: null, providers: {} } as OidcSettings;

/** `DEER_FLOW_ENV` or `ENVIRONMENT` is `prod`/`production` (DeerFlow's markers). */
function isProduction(env: Record<string, string | undefined>): boolean {
  return [env.DEER_FLOW_ENV, env.ENVIRONMENT].some((v) => ["prod", "production"].includes((v ?? "").trim().toLowerCase()));
}

/**
 * The effective auth settings of a config's `auth:` section.
 * `DEER_FLOW_AUTH_DISABLED=1` wins over `auth.enabled: true` (except with
 * `DEER_FLOW_ENV`/`ENVIRONMENT` = `production`, where it is ignored).
 * `registration_enabled` wins over DeerFlow's `local.allow_registration`;
 * with neither, registration is off (an admin adds accounts).
 *
 * @throws ConfigError `auth_jwt_secret_missing` when auth is enabled without
 *   `auth.jwt_secret`: a secret made up here would differ per process and
 *   per restart, silently signing everyone out.
 */
export function resolveAuthSettings(section: AuthSection | null | undefined, env: Record<string, string | undefined> = process.env): AuthSettings {
  const s = section ?? {};
  const registrationEnabled = s.registration_enabled ?? s.local?.allow_registration ?? false;
  const sessionDays = s.session_days ?? 7;
  const oidc = { ...NO_OIDC, ...(s.oidc ?? {}) } as OidcSettings;
  const base = { registrationEnabled, sessionDays, oidc };
  // as in DeerFlow, a deployment that declares itself production ignores the development switch
  if (env.DEER_FLOW_AUTH_DISABLED === "1" && !isProduction(env)) return { ...base, enabled: false, disabledBy: "env", jwtSecret: null };
  if (s.enabled !== true) return { ...base, enabled: false, disabledBy: "config", jwtSecret: null };
  const secret = s.jwt_secret ?? null;
  if (!secret) {
    throw new ConfigError(
      "auth.enabled is true but auth.jwt_secret is not set. Run `deerflow init` (it writes DEER_FLOW_JWT_SECRET to .env and sets auth.jwt_secret: $DEER_FLOW_JWT_SECRET), or set auth.jwt_secret to a random string of at least 32 characters.",
      { code: "auth_jwt_secret_missing" },
    );
  }
  if (secret.length < 32) {
    throw new ConfigError("auth.jwt_secret must be at least 32 characters (`deerflow init` generates one).", { code: "auth_jwt_secret_missing" });
  }
  // browsers cap a cookie's lifetime at 400 days
  if (!Number.isInteger(sessionDays) || sessionDays < 1 || sessionDays > 400) {
    throw new ConfigError(`auth.session_days must be a whole number of days from 1 to 400 (got ${sessionDays}).`, { code: "auth_session_days_invalid" });
  }
  return { ...base, enabled: true, jwtSecret: secret };
}
