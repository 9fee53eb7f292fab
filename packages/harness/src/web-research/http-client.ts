import http from "node:http";
import https from "node:https";
import type { LookupFunction, Socket } from "node:net";
import zlib from "node:zlib";
import { WebRequestError } from "./errors";
import { normalizeHost } from "../net";
import type { ResolvedAddress, UrlGuard } from "./ssrf-guard";

/** A browser-like user agent: many sites answer bots with a stub page. */
export const DEFAULT_USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 DeerFlow/2.0";

/** Options of {@link httpRequest}. */
export interface HttpRequestOptions {
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Whole-request deadline (connect, redirects and body). */
  timeoutMs: number;
  /** Largest decoded body accepted; larger bodies fail with `too_large`. */
  maxBytes: number;
  signal?: AbortSignal;
  /**
   * SSRF guard for URLs from the model or from fetched content: every hop is
   * checked and its socket is pinned to the checked addresses. Omit it only
   * for a provider's configured `base_url`, which the operator chose.
   */
  guard?: UrlGuard;
  /** Redirects followed (default 5; 0 returns the 3xx response as is). */
  maxRedirects?: number;
  /** Extra trusted CA certificates (PEM) for HTTPS, e.g. an internal CA or a test certificate. */
  ca?: string | Buffer;
}

/** A completed HTTP exchange. */
export interface HttpResponse {
  /** Final URL after redirects. */
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** URLs redirected through, in order. */
  redirects: string[];
}

/** A `lookup` that answers only with the already-checked addresses (no second DNS query). */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, addresses.map((a) => ({ address: a.address, family: a.family })));
    else cb(null, addresses[0].address, addresses[0].family);
  }) as unknown as LookupFunction;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  switch ((encoding ?? "").trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "deflate":
      return zlib.createInflate();
    case "br":
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

interface OneHop {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function requestOnce(url: URL, pinned: ResolvedAddress[] | undefined, opts: HttpRequestOptions, method: string, body: string | undefined, deadline: AbortSignal): Promise<OneHop> {
  return new Promise<OneHop>((resolve, reject) => {
    const mod = url.protocol === "https:" ? https : http;
    const headers: Record<string, string> = { "user-agent": DEFAULT_USER_AGENT, "accept-encoding": "gzip, deflate, br", ...lowerKeys(opts.headers ?? {}) };
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const req = mod.request(url, {
      method,
      headers,
      agent: false,
      lookup: pinned ? pinnedLookup(pinned) : undefined,
      signal: deadline,
      ...(opts.ca && url.protocol === "https:" ? { ca: opts.ca } : {}),
    });
    const fail = (err: unknown) => reject(err);
    if (pinned) {
      // Belt and braces: the socket must really be connected to a checked address.
      const allowed = new Set(pinned.map((a) => normalizeHost(a.address)));
      req.on("socket", (socket: Socket) => {
        socket.once("connect", () => {
          const remote = normalizeHost(socket.remoteAddress ?? "");
          const plain = remote.startsWith("::ffff:") ? remote.slice(7) : remote;
          if (!allowed.has(remote) && !allowed.has(plain)) {
            req.destroy(new WebRequestError("blocked", `Connected address ${remote} is not the checked address`));
          }
        });
      });
    }
    req.on("error", fail);
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      const declared = Number(headerValue(res.headers["content-length"]));
      if (Number.isFinite(declared) && declared > opts.maxBytes && !res.headers["content-encoding"]) {
        req.destroy();
        reject(new WebRequestError("too_large", `Response is ${declared} bytes, over the ${opts.maxBytes}-byte limit`));
        return;
      }
      const decoder = decoderFor(headerValue(res.headers["content-encoding"]));
      const stream = decoder ? res.pipe(decoder) : res;
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (c: Buffer) => {
        size += c.length;
        if (size > opts.maxBytes) {
          req.destroy();
          decoder?.destroy();
          reject(new WebRequestError("too_large", `Response is over the ${opts.maxBytes}-byte limit`));
          return;
        }
        chunks.push(c);
      });
      stream.on("error", fail);
      res.on("error", fail);
      stream.on("end", () => resolve({ status, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/**
 * One HTTP(S) request with a deadline, a body-size limit, transparent
 * gzip/deflate/br decoding and manual redirects (each hop re-checked by the
 * guard and pinned to its checked addresses). Failures before a status line
 * are {@link WebRequestError}s; any HTTP status is returned, not thrown.
 */
export async function httpRequest(input: string | URL, opts: HttpRequestOptions): Promise<HttpResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new WebRequestError("timeout", `Request timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
  const onAbort = () => controller.abort(new WebRequestError("aborted", "Request was cancelled"));
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const maxRedirects = opts.maxRedirects ?? 5;
  const redirects: string[] = [];
  let method = opts.method ?? "GET";
  let body = opts.body;
  try {
    let url: URL;
    try {
      url = typeof input === "string" ? new URL(input) : input;
    } catch {
      throw new WebRequestError("invalid_url", `Invalid URL: ${String(input).slice(0, 200)}. URLs must include the scheme, e.g. https://example.com`);
    }
    for (let hop = 0; ; hop++) {
      const pinned = opts.guard ? (await opts.guard.check(url)).addresses : undefined;
      let res: OneHop;
      try {
        res = await requestOnce(url, pinned, opts, method, body, controller.signal);
      } catch (err) {
        throw normalizeError(err, controller.signal);
      }
      const location = headerValue(res.headers.location);
      if (!isRedirect(res.status) || !location || maxRedirects === 0) {
        return { url: url.toString(), status: res.status, headers: res.headers, body: res.body, redirects };
      }
      if (hop >= maxRedirects) throw new WebRequestError("too_many_redirects", `Stopped after ${maxRedirects} redirects (last: ${url.toString()})`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new WebRequestError("invalid_url", `Redirect to an invalid URL: ${location.slice(0, 200)}`);
      }
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      redirects.push(next.toString());
      url = next;
    }
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

function normalizeError(err: unknown, signal: AbortSignal): unknown {
  if (err instanceof WebRequestError) return err;
  if (signal.aborted && signal.reason instanceof WebRequestError) return signal.reason;
  const code = (err as { code?: string })?.code;
  const msg = err instanceof Error ? err.message : String(err);
  return new WebRequestError("connection", `Connection failed${code ? ` (${code})` : ""}: ${msg}`, { cause: err });
}

/** Read a header as one string (first value). */
export function responseHeader(res: HttpResponse, name: string): string | undefined {
  return headerValue(res.headers[name.toLowerCase()]);
}
