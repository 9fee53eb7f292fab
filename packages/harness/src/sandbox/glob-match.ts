/**
 * Minimal glob → RegExp translation (pathlib-like semantics on POSIX
 * relative paths): `*` and `?` never cross `/`, `**` spans directories,
 * `[...]` classes and `{a,b}` alternatives are supported.
 */

import { SandboxError } from "../errors";

/**
 * The RegExp the grep tool searches with: `pattern` as a regular expression
 * (or, with `literal`, as plain text), case-insensitive unless asked. An
 * invalid expression is a SandboxError (`invalid_pattern`) the model can read.
 */
export function grepRegExp(pattern: string, options: { literal?: boolean; caseSensitive?: boolean } = {}): RegExp {
  const source = options.literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : pattern;
  try {
    return new RegExp(source, options.caseSensitive ? "" : "i");
  } catch (err) {
    throw new SandboxError(`Invalid regular expression: ${(err as Error).message}`, { code: "invalid_pattern" });
  }
}

function escapeRe(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

/** Translate a glob into an anchored RegExp. */
export function globToRegExp(pattern: string, options: { caseSensitive?: boolean } = {}): RegExp {
  let re = "";
  let braceDepth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        const atSegStart = i === 0 || pattern[i - 1] === "/";
        const followedBySlash = pattern[i + 2] === "/";
        i++;
        if (atSegStart && followedBySlash) {
          re += "(?:[^/]*/)*";
          i++;
        } else {
          re += ".*";
        }
      } else {
        re += "[^/]*";
      }
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) {
        re += "\\[";
      } else {
        let body = pattern.slice(i + 1, end);
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else if (c === "{") {
      braceDepth++;
      re += "(?:";
    } else if (c === "}" && braceDepth > 0) {
      braceDepth--;
      re += ")";
    } else if (c === "," && braceDepth > 0) {
      re += "|";
    } else {
      re += escapeRe(c);
    }
  }
  while (braceDepth-- > 0) re += ")";
  return new RegExp(`^${re}$`, options.caseSensitive === false ? "i" : "");
}
