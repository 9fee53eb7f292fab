import { ValidationError } from "../errors";
import { containsSecretText } from "../persistence/redact";

/** The value a secret is replaced with in responses (and may be sent back unchanged). */
export const MASKED_VALUE = "***";

const SENSITIVE_KEY = /(^|_)(api_key|apikey|access_key|private_key|client_secret|secret|token|password|passwd|credential|credentials|authorization|bearer|auth)(_|$)/i;

/** `fooBar`, `foo-bar`, `FOO_BAR` → `foo_bar` (so one pattern covers every spelling). */
export function snakeKey(key: string): string {
  return key
    .replace(/(.)([A-Z][a-z]+)/g, "$1_$2")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/** True when a key, flag or variable name looks like it names a secret (`api_key`, `--token`, `DB_PASSWORD`). */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(snakeKey(key));
}

// A scheme followed by `://` and everything up to whitespace: the part of a string that is a URL.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/**
 * Mask the credentials a URL carries, textually (the rest of the string is
 * kept byte for byte so the masked form is stable): userinfo becomes `***`
 * (`***:***` with a password) and the value of every query parameter `***`.
 * All query values are masked, not only secret-looking names: a token is
 * often sent as `?key=`, `?sig=`, `?code=` or a vendor's own name.
 */
function maskUrl(url: string): string {
  const schemeEnd = url.indexOf("://") + 3;
  const rest = url.slice(schemeEnd);
  const authorityEnd = rest.search(/[/?#]/);
  let authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  let tail = authorityEnd < 0 ? "" : rest.slice(authorityEnd);
  const at = authority.lastIndexOf("@");
  if (at >= 0) authority = `${authority.slice(0, at).includes(":") ? `${MASKED_VALUE}:${MASKED_VALUE}` : MASKED_VALUE}${authority.slice(at)}`;
  const q = tail.indexOf("?");
  if (q >= 0) {
    const hash = tail.indexOf("#", q);
    const query = hash < 0 ? tail.slice(q + 1) : tail.slice(q + 1, hash);
    const masked = query
      .split("&")
      .map((pair) => {
        const eq = pair.indexOf("=");
        return eq >= 0 && eq < pair.length - 1 ? `${pair.slice(0, eq + 1)}${MASKED_VALUE}` : pair;
      })
      .join("&");
    tail = `${tail.slice(0, q + 1)}${masked}${hash < 0 ? "" : tail.slice(hash)}`;
  }
  return `${url.slice(0, schemeEnd)}${authority}${tail}`;
}

/** Every URL inside `text` with its userinfo and query values masked. */
export function maskUrlsIn(text: string): string {
  return text.replace(URL_IN_TEXT, maskUrl);
}

const FLAG = /^(-{1,2})([A-Za-z0-9][A-Za-z0-9_.-]*)(=(.*))?$/s;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_.-]*)=(.*)$/s;
// `Authorization: Bearer …` as passed to `--header`.
const HEADER_LINE = /^([A-Za-z0-9_-]+):\s*(.+)$/s;

/**
 * The masked form of a command line: the value of a secret-looking flag
 * (`--token X`, `--api-key=X`, `-password X`), the value of a secret-looking
 * `KEY=VALUE` or `Header: value` argument, and the credentials of every URL an argument
 * contains. Deterministic, so a client that sends the masked form back gets
 * the stored argument (see {@link restoreMaskedArgs}).
 */
export function maskArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let valueOfSecretFlag = false;
  for (const arg of args) {
    if (valueOfSecretFlag && !arg.startsWith("-")) {
      out.push(MASKED_VALUE);
      valueOfSecretFlag = false;
      continue;
    }
    valueOfSecretFlag = false;
    const flag = FLAG.exec(arg);
    if (flag && isSensitiveKey(flag[2])) {
      if (flag[3] !== undefined) out.push(`${flag[1]}${flag[2]}=${MASKED_VALUE}`);
      else {
        out.push(arg);
        valueOfSecretFlag = true;
      }
      continue;
    }
    const assign = flag ? null : ASSIGNMENT.exec(arg);
    if (assign && isSensitiveKey(assign[1])) {
      out.push(`${assign[1]}=${MASKED_VALUE}`);
      continue;
    }
    const header = flag || assign ? null : HEADER_LINE.exec(arg);
    if (header && isSensitiveKey(header[1])) {
      out.push(`${header[1]}: ${MASKED_VALUE}`);
      continue;
    }
    // A token in a known key format (`ghp_…`, `sk-…`) is masked wherever it stands: positional, or after a
    // short flag whose meaning only the server knows.
    if (containsSecretText(arg)) {
      out.push(MASKED_VALUE);
      continue;
    }
    out.push(maskUrlsIn(arg));
  }
  return out;
}

/**
 * Args a client sent back after a masked GET: an argument equal to the
 * masked form of the stored argument at the same position is the stored
 * one. Anything else that still contains `***` cannot be restored and is
 * refused (a moved or edited masked argument must be re-entered).
 */
export function restoreMaskedArgs(server: string, incoming: readonly string[], stored: readonly string[]): string[] {
  const masked = maskArgs(stored);
  return incoming.map((arg, i) => {
    if (i < stored.length && arg === stored[i]) return arg;
    if (i < stored.length && arg === masked[i]) return stored[i];
    if (arg.includes(MASKED_VALUE)) {
      throw new ValidationError(`MCP server '${server}': args[${i}] contains the masked value '***' but does not match the stored argument at that position; provide the real value.`, {
        code: "mcp_masked_value",
        details: { server },
      });
    }
    return arg;
  });
}

/** The stored URL when `incoming` is its masked form; the incoming one otherwise (refused if it still holds `***`). */
export function restoreMaskedUrl(server: string, incoming: string | null | undefined, stored: string | null | undefined): string | null | undefined {
  if (typeof incoming !== "string") return incoming;
  if (typeof stored === "string" && (incoming === stored || incoming === maskUrlsIn(stored))) return stored;
  if (incoming.includes(MASKED_VALUE)) {
    throw new ValidationError(`MCP server '${server}': url contains the masked value '***' but is not the stored url; provide the real value.`, {
      code: "mcp_masked_value",
      details: { server },
    });
  }
  return incoming;
}
