/** Methods that only read: never refused for their origin. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The origin of a URL or `Origin` header as browsers serialise it
 * (`http://localhost:2026`, default port dropped, lower case), or
 * `undefined` for `null`, opaque or malformed values.
 */
export function normalizeOrigin(raw: string | undefined | null): string | undefined {
  if (!raw || raw === "null") return undefined;
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/** The request facts the origin rule reads. */
export interface OriginFacts {
  method: string;
  /** `Origin` header, if any. */
  origin?: string;
  /** `Sec-Fetch-Site` header, if any. */
  secFetchSite?: string;
  /** The gateway's own origin for this request (scheme + the checked `Host`). */
  ownOrigin: string;
  /** `server.allowed_origins`, normalised. */
  allowedOrigins: ReadonlySet<string>;
}

/** Why a state-changing request was refused, or `undefined` when it may proceed. */
export function originRefusal(f: OriginFacts): string | undefined {
  if (SAFE_METHODS.has(f.method.toUpperCase())) return undefined;
  const site = f.secFetchSite?.toLowerCase();
  // set by the browser itself (a page cannot forge it): the UI on this origin, or a
  // same-origin proxy in front of the gateway (DeerFlow's Next.js frontend), or the user typing a URL
  if (site === "same-origin" || site === "none") return undefined;
  if (f.origin !== undefined) {
    const o = normalizeOrigin(f.origin);
    if (o !== undefined && (o === f.ownOrigin || f.allowedOrigins.has(o))) return undefined;
    return `Cross-origin ${f.method.toUpperCase()} from ${f.origin === "null" ? "an opaque origin (Origin: null)" : `'${f.origin}'`} refused: only the gateway's own origin (${f.ownOrigin}) may change state. To allow another web app, add its origin to server.allowed_origins in config.yaml.`;
  }
  if (site === "cross-site" || site === "same-site") {
    return `Cross-site ${f.method.toUpperCase()} (Sec-Fetch-Site: ${site}) without an Origin refused. To allow another web app, add its origin to server.allowed_origins in config.yaml.`;
  }
  // neither header: not a browser (the LangGraph SDK in Node, curl, the CLI); a browser always sends one of them
  return undefined;
}

/** Headers a cross-origin client may read (the SDK needs `Content-Location`, the artifact preview `Content-Range`). */
export const CORS_EXPOSED_HEADERS = "Content-Location, Location, Content-Range, Content-Disposition, Content-Length";
/** Methods answered in a preflight. */
export const CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/** CORS headers for an allowed cross-origin request (`preflight`: the answer to an `OPTIONS` preflight). */
export function corsHeaders(origin: string, preflight?: { requestHeaders?: string }): Record<string, string> {
  const h: Record<string, string> = {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Credentials": "true",
    Vary: "Origin",
  };
  if (preflight) {
    h["Access-Control-Allow-Methods"] = CORS_METHODS;
    const asked = preflight.requestHeaders?.trim();
    if (asked && HEADER_LIST.test(asked)) h["Access-Control-Allow-Headers"] = asked;
    h["Access-Control-Max-Age"] = "600";
  } else {
    h["Access-Control-Expose-Headers"] = CORS_EXPOSED_HEADERS;
  }
  return h;
}
