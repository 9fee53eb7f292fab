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

/** What a redacted credential is replaced with. */
export const REDACTED = "[REDACTED]";

// A credential-carrying header or parameter name followed by its value, as a provider echoes it in an error
// text: `Authorization: Bearer …`, `"x-api-key":"…"`, `api-key=…`, `?key=…`. The name and the auth scheme
// stay so the error still says what was wrong; the value goes.
const CREDENTIAL_FIELD =
  /((?:proxy-)?authorization|x-api-key|x-goog-api-key|api[-_]?key|x-auth-token|access[-_]?token|auth[-_]?token|client[-_]?secret|cookie|(?<=[?&])key)(["']?\s*[:=]\s*["']?)((?:bearer|basic|token)\s+)?([^\s"',;&}<>]+)/gi;
// A bearer credential on its own (`… got Bearer abc.def` without a header name).
const BEARER = /\b(bearer\s+)([A-Za-z0-9._~+/=-]{6,})/gi;
// Key formats of the providers' own keys, wherever they appear: OpenAI / Anthropic / DeepSeek `sk-…`, Google
// `AIza…`, Groq `gsk_…`, xAI `xai-…`, Hugging Face `hf_…`, OpenRouter `sk-or-…` (a `sk-` key); and the
// tokens MCP servers are usually given: GitHub `ghp_…`/`gho_…`/`ghs_…`/`github_pat_…`, GitLab `glpat-…`,
// Slack `xox?-…`.
const KEY_SHAPES =
  /\b(?:sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,}|gsk_[A-Za-z0-9]{16,}|xai-[A-Za-z0-9]{16,}|hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{10,})/g;

/** Whether `text` holds a credential {@link redactSecretText} would scrub (a key shape, a bearer token, a credential field). */
export function containsSecretText(text: string): boolean {
  return redactSecretText(text) !== text;
}

/**
 * Scrub credentials out of a free text — a provider's error message or
 * response body, which some gateways and proxies fill with the request's
 * own headers. Header/parameter values of credential names, bearer tokens
 * and the providers' key formats become {@link REDACTED}; `secrets` (known
 * values, e.g. the configured key) are replaced wherever they occur. Applied
 * where a model error is made, so the SSE stream, run records, state and
 * logs only ever see the scrubbed text.
 */
export function redactSecretText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 6) out = out.split(s).join(REDACTED);
  return out
    .replace(CREDENTIAL_FIELD, (_m, name: string, sep: string, scheme: string | undefined) => `${name}${sep}${scheme ?? ""}${REDACTED}`)
    .replace(BEARER, (m, scheme: string, value: string) => (value === REDACTED ? m : `${scheme}${REDACTED}`))
    .replace(KEY_SHAPES, REDACTED);
}
