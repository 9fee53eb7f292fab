/**
 * Redaction of log records: a value is replaced by {@link REDACTED} when its
 * key names a secret (`api_key`, `authorization`, `cookie`, `password`, …) or
 * when the text itself looks like one (a provider key, a bearer credential, a
 * personal access token, a JWT, a cookie header). Applied to every log line
 * the gateway writes, message text included, so a secret that reaches a log
 * call by mistake still never reaches the output.
 */

/** What a redacted value is replaced with. */
export const REDACTED = "[REDACTED]";

/** Keys whose values are secrets whatever they hold (compared without `-`/`_`, case-insensitively). */
const SECRET_KEY = /(apikey|secret|password|passwd|token|authorization|cookie|credential|privatekey|accesskey|sessionid|xapikey)/i;
/** Keys that contain a secret word but hold counts (token usage figures are not secrets). */
const COUNT_KEY = /(tokens|tokencount|maxcontexttokens|tokenusage)$/i;

/**
 * Secret-looking text inside any string: provider keys (`sk-…`, `sk-ant-…`),
 * our personal access tokens (`dfp_…`), `Bearer`/`Basic` credentials, JWTs,
 * LangSmith/Langfuse keys, and `name=value` pairs of a cookie or query string
 * whose name is a secret.
 */
const SECRET_VALUE = new RegExp(
  [
    String.raw`\b(?:sk|pk|rk)-(?:ant-|proj-|lf-)?[A-Za-z0-9_-]{8,}`,
    String.raw`\bdfp_[A-Za-z0-9_-]{8,}`,
    String.raw`\blsv2_[A-Za-z0-9_]{8,}`,
    String.raw`\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}`,
    String.raw`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}`,
    String.raw`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`,
    String.raw`\bgh[pousr]_[A-Za-z0-9]{20,}`,
    String.raw`\b((?:[A-Za-z0-9_-]*(?:api[_-]?key|token|secret|password|session|sid|csrf)[A-Za-z0-9_-]*))=(?!\d+(?:[\s;&,]|$))[^\s;&,"']+`,
  ].join("|"),
  "gi",
);

/** Whether a key names a secret. */
export function isSecretKey(key: string): boolean {
  const k = key.replace(/[-_]/g, "");
  return SECRET_KEY.test(k) && !COUNT_KEY.test(k);
}

/** `text` with every secret-looking part replaced ({@link SECRET_VALUE}); the same string when there is none. */
export function redactText(text: string): string {
  SECRET_VALUE.lastIndex = 0;
  if (!SECRET_VALUE.test(text)) return text;
  SECRET_VALUE.lastIndex = 0;
  return text.replace(SECRET_VALUE, (match, pairName: string | undefined) => (pairName ? `${pairName}=${REDACTED}` : REDACTED));
}

/**
 * A copy of `value` with secrets redacted by key and by value pattern, or
 * `value` itself when nothing needed redacting (the common case allocates
 * nothing). Cycles and depth beyond 8 are cut.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "[depth]";
  if (value instanceof Error) return { type: value.name, message: redactText(value.message), ...(value.stack ? { stack: redactText(value.stack) } : {}) };
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = redactValue(value[i], depth + 1);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    const r = v !== null && v !== undefined && v !== "" && isSecretKey(key) && typeof v !== "number" && typeof v !== "boolean" ? REDACTED : redactValue(v, depth + 1);
    if (r !== v) (out ??= { ...obj })[key] = r;
  }
  return out ?? value;
}
