/** Where a sign-in lands when no (acceptable) `next` was given: DeerFlow's workspace. */
export const DEFAULT_NEXT_PATH = "/workspace";

/**
 * The `next` target of a sign-in if it is a same-origin relative path, else
 * `null`. The browser is sent there after the provider's round trip, so
 * anything a browser could read as another origin is refused: absolute URLs
 * and schemes (`https:`, `javascript:`), protocol-relative `//host`, and
 * backslashes (`/\host`, which browsers treat as `//host`). Control
 * characters are refused too: browsers strip tabs and newlines from URLs, so
 * `/\t/evil` would become `//evil`.
 */
export function validateNextPath(next: string | null | undefined): string | null {
  if (!next || next.length > 2048) return null;
  if (!next.startsWith("/") || next.startsWith("//")) return null;
  if (next.includes("\\") || next.includes(":")) return null;
  if (/[\u0000-\u001f\u007f]/.test(next)) return null;
  // A percent-encoded slash or backslash right after the leading one decodes into `//` or `/\` in some routers.
  if (/^\/%(2f|5c)/i.test(next)) return null;
  return next;
}

/** {@link validateNextPath}, falling back to {@link DEFAULT_NEXT_PATH}. */
export function resolveNextPath(next: string | null | undefined): string {
  return validateNextPath(next) ?? DEFAULT_NEXT_PATH;
}
