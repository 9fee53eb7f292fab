import type { ServerResponse } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { HostAllowlist, parseHostPort } from "./hosts";
import { corsHeaders, normalizeOrigin, originRefusal } from "./origin";
import { API_SECURITY_HEADERS } from "./served-files";

/** What the request guard reads on each request (config.yaml can change under a running gateway). */
export interface RequestGuardSettings {
  /** `server.allowed_hosts` plus the `allowedHosts` option. */
  allowedHosts: readonly string[];
  /** `server.allowed_origins` plus the `allowedOrigins` option. */
  allowedOrigins: readonly string[];
}

/** Paths answered for any `Host`: a liveness probe that reveals nothing (container health checks use the pod's address). */
const OPEN_PATHS: ReadonlySet<string> = new Set(["/health"]);

function isApiPath(pathname: string): boolean {
  return pathname === "/api" || pathname.startsWith("/api/");
}

/** login/local, register, initialize, logout under either API mount. */
const AUTH_BOOTSTRAP = /^\/api(?:\/langgraph)?\/v1\/auth\/(?:login\/local|register|initialize|logout)$/;
function isAuthBootstrap(pathname: string): boolean {
  return AUTH_BOOTSTRAP.test(pathname);
}

function refuse(c: Context, detail: string): Response {
  return c.json({ detail }, 403, { ...API_SECURITY_HEADERS });
}

/**
 * The gateway's front door, before every route and the static UI:
 *
 * 1. **Host allowlist** (DNS rebinding): a page on `evil.example` whose name
 *    now resolves to 127.0.0.1 reaches the gateway with `Host: evil.example`;
 *    only the loopback names, the bind address and `server.allowed_hosts`
 *    are served.
 * 2. **Origin rule** (CSRF): POST/PUT/PATCH/DELETE from a browser must come
 *    from the gateway's own origin (or a same-origin proxy, told by
 *    `Sec-Fetch-Site`), or from `server.allowed_origins`. There are no users
 *    or cookies yet, so nothing else stops a foreign page.
 * 3. **CORS** only for `server.allowed_origins`.
 * 4. Every `/api` response gets `Content-Security-Policy: sandbox` and
 *    `nosniff` (files from threads must never render as active content).
 */
export class RequestGuard {
  private bindHost: string | undefined;
  private cache: { key: string; hosts: HostAllowlist; origins: Set<string> } | undefined;
  private readonly reported = new Set<string>();

  constructor(
    private readonly settings: () => RequestGuardSettings,
    private readonly log: (message: string) => void,
  ) {}

  /** The address the server listens on (part of the Host allowlist; a wildcard means the machine's addresses). */
  setBindHost(host: string | undefined): void {
    this.bindHost = host;
    this.cache = undefined;
  }

  private current(): { hosts: HostAllowlist; origins: Set<string> } {
    const s = this.settings();
    const key = `${this.bindHost ?? ""}\0${s.allowedHosts.join("\n")}\0${s.allowedOrigins.join("\n")}`;
    if (this.cache?.key === key) return this.cache;
    const hosts = new HostAllowlist({ bindHost: this.bindHost, extra: s.allowedHosts });
    for (const bad of hosts.invalid) this.warnOnce(`[gateway] server.allowed_hosts: '${bad}' is not a host name (expected e.g. deerflow.lan or 10.0.0.5:2026); ignored`);
    const origins = new Set<string>();
    for (const o of s.allowedOrigins) {
      const n = normalizeOrigin(o);
      if (n) origins.add(n);
      else this.warnOnce(`[gateway] server.allowed_origins: '${o}' is not an origin (expected e.g. http://localhost:3000); ignored`);
    }
    this.cache = { key, hosts, origins };
    return this.cache;
  }

  /** `server.allowed_origins` (plus the option's), normalised: the auth bootstrap POSTs accept the same origins. */
  allowedOrigins(): ReadonlySet<string> {
    return this.current().origins;
  }

  private warnOnce(message: string): void {
    if (this.reported.has(message)) return;
    this.reported.add(message);
    this.log(message);
  }

  /** The Hono middleware. */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const url = new URL(c.req.url);
      // the path as the router matches it (percent-escapes decoded): `/%61pi/…` is routed to the API too
      const routed = c.req.path;
      if (OPEN_PATHS.has(routed)) return next();
      const { hosts, origins } = this.current();
      const defaultPort = url.protocol === "https:" ? 443 : 80;
      const hostHeader = c.req.header("host");
      for (const host of hostHeader === undefined || hostHeader === url.host ? [url.host] : [hostHeader, url.host]) {
        if (!hosts.allows(host, defaultPort)) {
          const shown = parseHostPort(host)?.hostname ?? host;
          return refuse(
            c,
            `Host '${host}' is not served by this gateway (it answers only its own names, against DNS rebinding). If '${shown}' is how you reach it, add it to server.allowed_hosts in config.yaml.`,
          );
        }
      }
      const method = c.req.method.toUpperCase();
      const originHeader = c.req.header("origin");
      const origin = normalizeOrigin(originHeader);
      const ownOrigin = url.origin;
      const allowedCors = origin !== undefined && origin !== ownOrigin && origins.has(origin);
      if (method === "OPTIONS" && originHeader !== undefined && c.req.header("access-control-request-method")) {
        if (allowedCors) return c.body(null, 204, corsHeaders(origin, { requestHeaders: c.req.header("access-control-request-headers") }));
        if (origin !== ownOrigin) {
          return refuse(c, `Cross-origin requests from '${originHeader}' are not allowed. To allow another web app, add its origin to server.allowed_origins in config.yaml.`);
        }
      }
      const refusal = originRefusal({ method, origin: originHeader, secFetchSite: c.req.header("sec-fetch-site"), ownOrigin, allowedOrigins: origins });
      // DeerFlow's wording on the session-creating POSTs (its frontend and specs read it)
      if (refusal) return refuse(c, isAuthBootstrap(routed) ? "Cross-site auth request denied." : refusal);
      const extra: Record<string, string> = {};
      if (isApiPath(routed)) Object.assign(extra, API_SECURITY_HEADERS);
      if (allowedCors) Object.assign(extra, corsHeaders(origin));
      // SSE streams write straight to the Node response (sse-response.ts): its headers are set there too
      const outgoing = nodeOutgoing(c);
      if (outgoing) for (const [k, v] of Object.entries(extra)) outgoing.setHeader(k, v);
      await next();
      if (Object.keys(extra).length) addHeaders(c, extra);
    };
  }
}

/** The Node response behind a request served by `@hono/node-server`, while its headers can still be set. */
function nodeOutgoing(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing && typeof outgoing.setHeader === "function" && !outgoing.headersSent ? outgoing : undefined;
}

/** `@hono/node-server`'s marker of a response a route already wrote to the Node response itself (SSE). */
const ALREADY_SENT = "x-hono-already-sent";

function addHeaders(c: Context, headers: Record<string, string>): void {
  // a shared placeholder, never sent: its headers were set on the Node response before the route ran
  if (c.res.headers.has(ALREADY_SENT)) return;
  const apply = (target: Headers) => {
    for (const [k, v] of Object.entries(headers)) {
      if (k === "Vary") target.append(k, v);
      // a route's own CSP / nosniff stays
      else if (!(k in API_SECURITY_HEADERS) || !target.has(k)) target.set(k, v);
    }
  };
  try {
    apply(c.res.headers);
  } catch {
    // immutable headers (a Response built elsewhere): copy it once
    c.res = new Response(c.res.body, { status: c.res.status, statusText: c.res.statusText, headers: new Headers(c.res.headers) });
    apply(c.res.headers);
  }
}
