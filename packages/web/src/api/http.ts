/**
 * The one door every API call of the UI goes through. It adds the double-submit CSRF header to
 * writes and turns a 401 into a trip to the login page, so no call site can forget either.
 */

/** An HTTP failure with the server's `detail` text (and its `code` when the gateway sent one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Methods the gateway checks the CSRF token on. */
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The value of cookie `name` in a `document.cookie`-style string. */
export function readCookie(name: string, cookies: string): string | undefined {
  for (const part of cookies.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return undefined;
}

function browserCookies(): string {
  return typeof document === "undefined" ? "" : document.cookie;
}

/** `{"X-CSRF-Token": <csrf_token cookie>}`, or `{}` when there is no such cookie (auth disabled). */
export function csrfHeader(cookies: string = browserCookies()): Record<string, string> {
  const token = readCookie("csrf_token", cookies);
  return token ? { "X-CSRF-Token": token } : {};
}

/** What a 401 hands to the unauthorised handler. */
export interface UnauthorizedEvent {
  url: string;
  method: string;
}

/** How {@link createApiFetch} is wired (the browser defaults fit the app; tests pass their own). */
export interface ApiFetchOptions {
  /** The fetch that goes to the network (default: the global one). */
  fetch?: typeof fetch;
  /** The cookie string the CSRF token is read from (default: `document.cookie`). */
  cookies?: () => string;
  /** The origin the UI is served from: only requests to it get the CSRF token (default: `location.origin`). */
  origin?: () => string;
  /** Called once per 401 answer of a request that did not opt out. */
  onUnauthorized?: (event: UnauthorizedEvent) => void;
}

/** Per-call extras of {@link ApiFetch}. */
export interface ApiFetchExtras {
  /**
   * The caller handles a 401 itself (a failed login, the session probe at start-up) instead of
   * being sent to the login page.
   */
  allowUnauthorized?: boolean;
}

/** `fetch` with the CSRF header and the 401 redirect. */
export type ApiFetch = (input: RequestInfo | URL, init?: RequestInit, extras?: ApiFetchExtras) => Promise<Response>;

function requestUrl(input: RequestInfo | URL): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/**
 * Build an {@link ApiFetch}. The CSRF token goes only to the UI's own origin: the token is a
 * secret of this site, and a relative URL is always same-origin.
 */
export function createApiFetch(options: ApiFetchOptions = {}): ApiFetch {
  const cookies = options.cookies ?? browserCookies;
  const origin = options.origin ?? (() => (typeof location === "undefined" ? "" : location.origin));
  return async (input, init = {}, extras = {}) => {
    const base = input instanceof Request ? input : undefined;
    const method = (init.method ?? base?.method ?? "GET").toUpperCase();
    const url = requestUrl(input);
    const headers = new Headers(init.headers ?? base?.headers);
    let sameOrigin = true;
    try {
      const own = origin();
      sameOrigin = new URL(url, own || undefined).origin === own;
    } catch {
      // A relative URL without a known origin: it is resolved against this page.
      sameOrigin = !/^[a-z][a-z0-9+.-]*:/i.test(url);
    }
    if (MUTATING.has(method) && sameOrigin) {
      for (const [k, v] of Object.entries(csrfHeader(cookies()))) headers.set(k, v);
    }
    const doFetch = options.fetch ?? fetch;
    const res = await doFetch(input, { ...init, method, headers, credentials: init.credentials ?? "same-origin" });
    if (res.status === 401 && !extras.allowUnauthorized && sameOrigin) options.onUnauthorized?.({ url, method });
    return res;
  };
}

/** Where the browser goes on a 401: set once by the app (see `auth/redirect.ts`). */
let unauthorizedHandler: ((event: UnauthorizedEvent) => void) | undefined;

/** Install what a 401 does in the browser (the login redirect). */
export function setUnauthorizedHandler(handler: ((event: UnauthorizedEvent) => void) | undefined): void {
  unauthorizedHandler = handler;
}

/** The app's {@link ApiFetch}: the browser's fetch, `document.cookie`, and the installed 401 handler. */
export const apiFetch: ApiFetch = createApiFetch({ onUnauthorized: (e) => unauthorizedHandler?.(e) });

/** Text of a `detail` in the gateway's FastAPI-style shapes: a string, `{code, message}`, or 422 items. */
export function detailText(detail: unknown): string | undefined {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    const msgs = detail.map((d) => (d && typeof d === "object" && typeof (d as { msg?: unknown }).msg === "string" ? (d as { msg: string }).msg : "")).filter(Boolean);
    return msgs.length ? msgs.join("; ") : undefined;
  }
  if (detail && typeof detail === "object") {
    const m = (detail as { message?: unknown }).message;
    if (typeof m === "string") return m;
  }
  return undefined;
}

/** An {@link ApiError} from a failed answer (its `detail`, `detail.code` and `Retry-After`). */
export async function failure(res: Response): Promise<ApiError> {
  let text = `${res.status} ${res.statusText}`.trim();
  let code: string | undefined;
  try {
    const body = (await res.json()) as { detail?: unknown };
    text = detailText(body?.detail) ?? text;
    const c = (body?.detail as { code?: unknown } | undefined)?.code;
    if (typeof c === "string") code = c;
  } catch {
    /* not JSON */
  }
  const retry = Number(res.headers.get("Retry-After"));
  return new ApiError(res.status, text, code, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

/** JSON request to `${base}/api${path}`: the body as JSON, the answer parsed, a failure as {@link ApiError}. */
export async function jsonRequest<T>(method: string, path: string, body?: unknown, base = "", extras?: ApiFetchExtras): Promise<T> {
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  const res = await apiFetch(`${base}/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }, extras);
  if (!res.ok) throw await failure(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}
