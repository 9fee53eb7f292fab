/**
 * Nesting depth of a JSON text, measured with one linear pass over its
 * characters (brackets inside strings do not count). Stops as soon as
 * `stopAt` is passed, so a hostile body costs no more than reading it.
 * Deeply nested values are refused before parsing because every later
 * recursive walk (schema validation, cloning, serialising into state or
 * SQLite) would otherwise run out of stack on them.
 */
export function jsonDepth(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return max;
}

/** Default max nesting of a JSON request body (DeerFlow's payloads nest well under 20). */
export const DEFAULT_MAX_JSON_DEPTH = 64;
