/**
 * Where the login page sends the user afterwards. `next` arrives in the URL, so anybody can
 * craft it: only a path of this same site is accepted, never another origin (no open redirect).
 */

/** The app's own pages that own the auth flow; `next` never points back at them (no loops). */
export const AUTH_PATHS = ["/login", "/setup", "/auth/callback"] as const;

/** Where to go when `next` is missing or refused. */
export const DEFAULT_NEXT = "/";

/**
 * `raw` as a same-origin path (`/…?…#…`), or `undefined` when it is not one: anything that is not a
 * plain absolute path (`//host`, `/\host`, `https:`, `javascript:`), carries control characters or
 * whitespace that URL parsers drop or reinterpret, resolves to another origin, or leads into the
 * API or back into the auth pages.
 */
export function validateNextPath(raw: string | null | undefined, origin: string): string | undefined {
  if (!raw || raw.length > 2048) return undefined;
  if (!raw.startsWith("/") || raw.startsWith("//")) return undefined;
  // Browsers read a backslash as a slash (`/\evil.example` is `//evil.example`) and strip tabs/newlines.
  if (/[\\\s\u0000-\u001f\u007f]/.test(raw)) return undefined;
  // `/%2F…` or `/%5C…` decodes into `//…` or `/\…` in some routers (the gateway's own check refuses it too).
  if (/^\/%(2f|5c)/i.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw, origin);
  } catch {
    return undefined;
  }
  if (url.origin !== new URL(origin).origin) return undefined;
  const p = url.pathname;
  // What is returned is the parser's normalised path: dot segments fold (`/.//evil`, `/a/..//evil` become
  // `//evil`), so the result is held to the leading-`//` rule again, or `location.assign` would leave the site.
  if (p.startsWith("//")) return undefined;
  if (p === "/api" || p.startsWith("/api/") || p === "/health") return undefined;
  if (AUTH_PATHS.some((a) => p === a || p.startsWith(`${a}/`))) return undefined;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** Like {@link validateNextPath} but falls back to {@link DEFAULT_NEXT}. */
export function resolveNextPath(raw: string | null | undefined, origin: string): string {
  return validateNextPath(raw, origin) ?? DEFAULT_NEXT;
}

/** The current page as a `next` value (path, query and hash). */
export function pathOf(loc: Pick<Location, "pathname" | "search" | "hash">): string {
  return `${loc.pathname}${loc.search}${loc.hash}`;
}

/** `/login` (or `/setup`) with `next` set to `current` when that is a valid path to come back to. */
export function authPageUrl(page: "/login" | "/setup", current: string | undefined, origin: string): string {
  const next = validateNextPath(current, origin);
  return next && next !== DEFAULT_NEXT ? `${page}?next=${encodeURIComponent(next)}` : page;
}
