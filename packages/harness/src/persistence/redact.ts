const SECRET_KEY = /(api[_-]?key|token|secret|password|authorization|cookie|credential)/i;

/**
 * Deep-copy a value with secret-looking keys (`api_key`, `secrets`,
 * `authorization`, …) replaced by `***`: what a stored run record keeps of a
 * request's config and context. `token_usage` is not a secret.
 */
export function redactSecretKeys(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redactSecretKeys(v, depth + 1));
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // Keys, not entries: every run record passes its request through here, and a [key, value] pair per property
  // is garbage the request did not need.
  for (const k of Object.keys(src)) {
    out[k] = SECRET_KEY.test(k) && k !== "token_usage" ? "***" : redactSecretKeys(src[k], depth + 1);
  }
  return out;
}
