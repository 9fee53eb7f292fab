import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { VIRTUAL_USER_DATA } from "../sandbox";

/** Where a stdio server's files live on the host, so references can be shown as `/mnt/user-data/...`. */
export interface McpPathScope {
  /** Host path of the thread's `user-data` directory. */
  userDataDir: string;
  /** The server process's cwd as the server sees it (relative references resolve against it). */
  cwd: string;
  /**
   * Where the server sees the thread's user-data when it is not at its host
   * path (a sandboxed server sees it at `/mnt/user-data`): references under
   * it are checked at the corresponding host path.
   */
  serverUserData?: string;
}

// Candidate tokens are maximal runs without whitespace, quotes or shell/markup delimiters: one linear pass,
// so a huge result without separators cannot make the scan quadratic.
const TOKEN = /[^\s'"<>|*?`]+/g;
const LEADING_PUNCTUATION = /^[([{]+/;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}>"'`]+$/;

function hostPathOf(ref: string, cwd: string): string | undefined {
  if (!ref) return undefined;
  let raw: string;
  if (ref.startsWith("file://")) {
    try {
      raw = fileURLToPath(ref);
    } catch {
      return undefined;
    }
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(ref)) {
    return undefined; // http:, data:, … are not local files
  } else raw = ref;
  return path.isAbsolute(raw) ? path.normalize(raw) : path.resolve(cwd, raw);
}

/**
 * The `/mnt/user-data/...` path of a local file reference (bare path or
 * `file://` URI) produced by a stdio server, or undefined when it is remote,
 * missing, not a file, or outside this thread's user-data directory (those
 * are left exactly as the server wrote them).
 */
export function toVirtualPath(ref: string, scope: McpPathScope): string | undefined {
  let host = hostPathOf(ref.trim(), scope.cwd);
  if (!host) return undefined;
  const root = path.resolve(scope.userDataDir);
  if (scope.serverUserData) {
    const seen = path.relative(scope.serverUserData, host);
    // Only what the server sees of the thread maps; its own files (cwd, home) are not the thread's.
    if (!seen || seen.startsWith("..") || path.isAbsolute(seen)) return undefined;
    host = path.join(root, seen);
  }
  const rel = path.relative(root, host);
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  try {
    // Resolved first: a name the agent planted as a symlink to a host file must not map (and so must not tell
    // whether that host file exists); only a regular file really inside the thread does.
    const real = realpathSync(host);
    const realRel = path.relative(realpathSync(root), real);
    if (!realRel || realRel.startsWith("..") || path.isAbsolute(realRel)) return undefined;
    if (!statSync(real).isFile()) return undefined;
  } catch {
    return undefined;
  }
  return `${VIRTUAL_USER_DATA}/${rel.split(path.sep).join("/")}`;
}

/**
 * Distinct candidates checked against the filesystem per result: each is a
 * synchronous `stat`, and a server can return up to 10 MiB of path-like
 * tokens (reading back a file the agent wrote), which held the event loop
 * for seconds. Candidates past the budget are left as written.
 */
export const MAX_PATH_CHECKS = 1024;

/**
 * Rewrite local file references inside free text (servers often report a
 * saved file only in prose). Every candidate is checked against the
 * filesystem, so a token that merely looks like a path is left untouched.
 * `checked` is shared by the text blocks of one result ({@link MAX_PATH_CHECKS} in all).
 */
export function rewritePathsInText(text: string, scope: McpPathScope, checked: Map<string, string | undefined> = new Map()): string {
  const cache = checked;
  return text.replace(TOKEN, (token) => {
    if (!token.includes("/") || token.length > 4096) return token;
    const leading = LEADING_PUNCTUATION.exec(token)?.[0] ?? "";
    const stripped = token.slice(leading.length).replace(TRAILING_PUNCTUATION, "");
    const trailing = token.slice(leading.length + stripped.length);
    if (!cache.has(stripped)) {
      if (cache.size >= MAX_PATH_CHECKS) return token;
      cache.set(stripped, toVirtualPath(stripped, scope));
    }
    const v = cache.get(stripped);
    return v ? `${leading}${v}${trailing}` : token;
  });
}
