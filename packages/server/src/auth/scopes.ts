import type { TokenScope } from "./request-user";

/** The API path a route sees, without its mount (`/api` or `/api/langgraph`). */
export function apiRelativePath(path: string): string {
  if (path.startsWith("/api/langgraph/")) return path.slice("/api/langgraph".length);
  if (path === "/api/langgraph") return "/";
  if (path.startsWith("/api/")) return path.slice("/api".length);
  return path === "/api" ? "/" : path;
}

type Pattern = readonly string[];
const compile = (patterns: string[]): Pattern[] => patterns.map((p) => p.split("/").filter(Boolean));

function matches(pattern: Pattern, segments: readonly string[]): boolean {
  if (pattern.length !== segments.length) return false;
  return pattern.every((p, i) => p === "*" || p === segments[i]);
}

/**
 * POSTs that only read (the LangGraph SDK searches and history with POST):
 * allowed to a `read` token.
 */
const READ_POSTS = compile([
  "threads/search",
  "threads/count",
  "threads/*/history",
  "assistants/search",
  "assistants/count",
  "runs/search",
  "memory/recall",
]);

/**
 * What a `run` token may do beyond reading: create threads (and branches of
 * them), start runs (threaded, stateless, regenerate), join and cancel them,
 * upload files to a thread the run will read, and ask for follow-up
 * suggestions. Not: deleting or editing threads, state writes, memory,
 * agents, skills, MCP or account changes.
 */
const RUN_POSTS = compile([
  "threads",
  "threads/*/branches",
  "threads/*/runs",
  "threads/*/runs/stream",
  "threads/*/runs/wait",
  "threads/*/runs/*/cancel",
  "threads/*/runs/*/stream",
  "threads/*/runs/regenerate/prepare",
  "threads/*/runs/edit-regenerate/prepare",
  "threads/*/uploads",
  "threads/*/suggestions",
  "runs",
  "runs/stream",
  "runs/wait",
  "runs/batch",
]);

const READ_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The scope a token needs for `method path` (`path` as the router sees it,
 * mount included or not): `read`, `run` or `admin`.
 */
export function requiredScope(method: string, path: string): TokenScope {
  const m = method.toUpperCase();
  if (READ_METHODS.has(m)) return "read";
  const segments = apiRelativePath(path).split("/").filter(Boolean);
  if (m === "POST") {
    if (READ_POSTS.some((p) => matches(p, segments))) return "read";
    if (RUN_POSTS.some((p) => matches(p, segments))) return "run";
  }
  return "admin";
}

/** Whether `scopes` cover `needed` (`run` includes `read`; `admin` includes both). */
export function scopesAllow(scopes: readonly TokenScope[], needed: TokenScope): boolean {
  if (scopes.includes("admin")) return true;
  if (needed === "read") return scopes.includes("read") || scopes.includes("run");
  if (needed === "run") return scopes.includes("run");
  return false;
}
