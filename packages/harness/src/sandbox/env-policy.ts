/**
 * Which host environment variables a host subprocess may inherit
 * (DeerFlow's `env_policy.py`): anything that looks like a secret is dropped.
 */

const SECRET_MARKERS = ["KEY", "SECRET", "TOKEN", "PASS", "CREDENTIAL", "DSN", "AUTH", "COOKIE", "SESSION", "PRIVATE"];

const SECRET_NAMES = new Set([
  "DATABASE_URL",
  "REDIS_URL",
  "MONGODB_URI",
  "MONGO_URL",
  "MYSQL_PWD",
  "REDISCLI_AUTH",
  "PGSERVICEFILE",
  "PGPASSFILE",
  "POSTGRES_URL",
  "AMQP_URL",
  "SENTRY_DSN",
]);

/** True when an environment variable name looks like it holds a secret. */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (SECRET_NAMES.has(upper)) return true;
  return SECRET_MARKERS.some((m) => upper.includes(m));
}

/** A copy of `env` without secret-looking variables. */
export function scrubEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || isSecretEnvName(k)) continue;
    out[k] = v;
  }
  return out;
}
