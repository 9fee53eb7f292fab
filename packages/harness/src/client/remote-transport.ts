import type { z } from "zod";
import { DeerFlowError, errorMessage, ValidationError } from "../errors";
import { RemoteAuthError, RemoteConnectionError, RemoteHttpError, RemoteProtocolError, RemoteTimeoutError } from "./remote-errors";
import type { RemoteAuthReason, RemoteCallSite } from "./remote-errors";
import { readSseEvents } from "./remote-sse";
import type { SseEvent } from "./remote-sse";

/** How the remote client reaches the gateway (the HTTP half of {@link RemoteDeerFlowClientOptions}). */
export interface RemoteTransportOptions {
  /**
   * The server's root URL, as `deerflow serve` prints it (`http://127.0.0.1:2026`,
   * `https://deerflow.example.com`, or a reverse-proxy prefix like
   * `https://example.com/deerflow`). The client appends `/api/…`.
   */
  baseUrl: string;
  /** A personal access token (`dfp_…`), sent as `Authorization: Bearer …`. Not needed when the server runs without auth. */
  token?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Extra headers on every request (a proxy's own auth, a tracing header). `Authorization` is the token's when one is set. */
  headers?: Record<string, string>;
  /** Time for an answer, body included (ms; default 30 000; 0 = none). For a stream: until its headers arrive. */
  timeoutMs?: number;
  /**
   * Longest silence on a run stream (ms; default 60 000; 0 = none). The
   * gateway sends a heartbeat every 15 s by default, so silence this long
   * means the connection is gone.
   */
  streamIdleTimeoutMs?: number;
  /** Aborts every call of this client. */
  signal?: AbortSignal;
  /**
   * Allow sending the token over plain `http://` to a host that is not this
   * machine (default false: anyone on the path could read and reuse it).
   */
  allowInsecureHttp?: boolean;
}

/** One call's options. */
export interface RemoteCallOptions {
  query?: Record<string, string | number | boolean | null | undefined>;
  /** A JSON body. */
  json?: unknown;
  /** A multipart body. */
  form?: FormData;
  /** Aborts this call. */
  signal?: AbortSignal;
}

/** A streamed answer: its events and its response headers. */
export interface RemoteStream {
  headers: Headers;
  events: AsyncGenerator<SseEvent>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_STREAM_IDLE_MS = 60_000;
/** How much of a server's error detail goes into a message. */
const MAX_DETAIL_CHARS = 1000;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * Whether packets to `hostname` stay on this machine. Only `localhost` (the hosts file's) and literal loopback
 * addresses count: a `*.localhost` name is handed to the system resolver like any other, and where that is
 * "files dns" (the usual Linux setup) a DNS answer, which anyone on the path can forge, decides where it goes.
 */
function isLoopback(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** The base URL, checked: http(s), no credentials, query or fragment; no trailing slash. */
export function normaliseBaseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`baseUrl is not a URL: ${JSON.stringify(raw)} (expected e.g. http://127.0.0.1:2026)`, { code: "invalid_base_url" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ValidationError(`baseUrl must be http:// or https://, not ${url.protocol}`, { code: "invalid_base_url" });
  }
  // Credentials in a URL end up in logs and error messages: the token option is the one way to send them.
  if (url.username || url.password) throw new ValidationError("baseUrl must not contain a user name or password; pass a personal access token as `token`", { code: "invalid_base_url" });
  if (url.search || url.hash) throw new ValidationError("baseUrl must not have a query string or fragment", { code: "invalid_base_url" });
  url.pathname = url.pathname.replace(/\/+$/, "");
  return url;
}

/** `detail` as one line of text (DeerFlow's `{code, message}`, FastAPI's validation list, or a string). */
export function detailText(detail: unknown): string {
  let text: string;
  if (typeof detail === "string") text = detail;
  else if (Array.isArray(detail)) {
    text = detail
      .map((d) => {
        const item = d as { loc?: unknown; msg?: unknown };
        const loc = Array.isArray(item.loc) ? item.loc.join(".") : "";
        const msg = typeof item.msg === "string" ? item.msg : JSON.stringify(d);
        return loc ? `${loc}: ${msg}` : msg;
      })
      .join("; ");
  } else if (detail && typeof detail === "object" && typeof (detail as { message?: unknown }).message === "string") {
    text = (detail as { message: string }).message;
  } else text = detail === undefined || detail === null ? "" : JSON.stringify(detail);
  text = text.replace(/\s+/g, " ").trim();
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}

const SCOPES = "(read|run|admin)";

/** The scope a 403 names: RFC 6750's `WWW-Authenticate: Bearer error="insufficient_scope", scope="run"`, a `{required_scope}` detail, or its text. */
export function missingScope(detail: unknown, wwwAuthenticate: string | null): string | undefined {
  if (wwwAuthenticate && /error="?insufficient_scope/i.test(wwwAuthenticate)) {
    const m = /scope="([^"]*)"/i.exec(wwwAuthenticate);
    if (m) return m[1].trim().split(/\s+/)[0] || undefined;
  }
  if (detail && typeof detail === "object" && !Array.isArray(detail)) {
    const d = detail as Record<string, unknown>;
    for (const key of ["required_scope", "scope"]) if (typeof d[key] === "string" && d[key]) return d[key] as string;
    if (Array.isArray(d.required_scopes) && typeof d.required_scopes[0] === "string") return d.required_scopes[0];
  }
  const text = detailText(detail);
  const m = new RegExp(`\\bscope[^a-z]{0,3}${SCOPES}\\b`, "i").exec(text) ?? new RegExp(`\\b${SCOPES}[^a-z]{0,3}scope\\b`, "i").exec(text);
  return m ? m[1].toLowerCase() : undefined;
}

/**
 * The typed error of a non-2xx answer. 401 and 403 become
 * {@link RemoteAuthError}s worded for what the caller can do about them.
 */
export function remoteHttpError(site: RemoteCallSite, status: number, detail: unknown, headers: Headers, hadToken: boolean): RemoteHttpError {
  const text = detailText(detail);
  const said = text ? `: ${text}` : "";
  const where = `(HTTP ${status} from ${site.method} ${site.path})`;
  if (status === 401) {
    const reason: RemoteAuthReason = hadToken ? "token_refused" : "not_authenticated";
    const message = hadToken
      ? `The token was refused${said} ${where}. It may be revoked, expired or mistyped: create a new personal access token (account settings, or POST /api/v1/auth/tokens).`
      : `The server requires sign-in${said} ${where}. Pass a personal access token: new RemoteDeerFlowClient({ baseUrl, token: "dfp_…" }).`;
    return new RemoteAuthError(site, status, detail, reason, message);
  }
  if (status === 403) {
    // DeerFlow checks CSRF before sign-in: a write without a session or token is refused as "CSRF token missing".
    if (!hadToken && /csrf/i.test(text)) {
      return new RemoteAuthError(
        site,
        status,
        detail,
        "not_authenticated",
        `The server requires sign-in${said} ${where}. Pass a personal access token: new RemoteDeerFlowClient({ baseUrl, token: "dfp_…" }) (requests with a token need no CSRF token).`,
      );
    }
    const scope = hadToken ? missingScope(detail, headers.get("www-authenticate")) : undefined;
    if (scope) {
      return new RemoteAuthError(site, status, detail, "insufficient_scope", `The token lacks scope ${scope}${said} ${where}. Create a token with the ${scope} scope.`, scope);
    }
    return new RemoteAuthError(site, status, detail, "forbidden", `The server refused the request${said} ${where}.`);
  }
  return new RemoteHttpError(site, status, detail, `${site.method} ${site.path} failed with HTTP ${status}${said}`);
}

/**
 * A deadline that aborts with a {@link RemoteTimeoutError}. Started at once,
 * or (`armed: false`) only while {@link arm}ed: a stream's idle timer runs
 * while the client waits for the server, not while the consumer works.
 */
class Deadline {
  readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ms: number,
    private readonly message: string,
    armed = true,
  ) {
    if (armed) this.arm();
  }

  get fired(): boolean {
    return this.controller.signal.aborted;
  }

  /** (Re)start the countdown. */
  arm(): void {
    if (this.ms <= 0 || this.fired) return;
    this.clear();
    this.timer = setTimeout(() => this.controller.abort(new RemoteTimeoutError(this.message, this.ms)), this.ms);
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * The remote client's HTTP layer: builds URLs under `baseUrl`, sends the
 * token, applies timeouts and abort signals, reads JSON, bytes or SSE, and
 * turns every failure into a typed error. Redirects are not followed: the
 * token is only ever sent to `baseUrl`'s origin.
 */
export class RemoteTransport {
  readonly baseUrl: URL;
  private readonly fetchImpl: typeof fetch;
  private readonly token: string | undefined;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly clientSignal: AbortSignal | undefined;
  private readonly closing = new AbortController();

  constructor(options: RemoteTransportOptions) {
    this.baseUrl = normaliseBaseUrl(options.baseUrl);
    const token = options.token;
    if (token !== undefined) {
      // (the token itself never appears in a message)
      if (!token || /[\s\x00-\x1f\x7f]/.test(token)) {
        throw new ValidationError("The token is empty or contains whitespace or control characters; pass it exactly as it was shown when created", { code: "invalid_token" });
      }
      if (this.baseUrl.protocol === "http:" && !isLoopback(this.baseUrl.hostname) && !options.allowInsecureHttp) {
        throw new ValidationError(
          `Refusing to send the token over plain http:// to ${this.baseUrl.host}: anyone on the network path could read it. Use https://, or set allowInsecureHttp: true.`,
          { code: "insecure_transport" },
        );
      }
    }
    this.token = token;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.headers = { ...(options.headers ?? {}) };
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.idleMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_MS;
    this.clientSignal = options.signal;
  }

  /** Abort every call in flight (and refuse new ones). */
  close(): void {
    this.closing.abort(new RemoteConnectionError("The client was closed"));
  }

  private url(path: string, query: RemoteCallOptions["query"]): URL {
    const url = new URL(this.baseUrl.href);
    // (an http(s) URL's pathname is at least "/": the prefix is the path without its trailing slash)
    url.pathname = `${this.baseUrl.pathname.replace(/\/+$/, "")}${path}`;
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    return url;
  }

  private requestHeaders(accept: string, opts: RemoteCallOptions): Headers {
    const h = new Headers(this.headers);
    h.set("accept", accept);
    if (opts.json !== undefined) h.set("content-type", "application/json");
    if (this.token) h.set("authorization", `Bearer ${this.token}`);
    return h;
  }

  /** Mask the token if a server ever echoed it back. */
  private scrub(text: string): string {
    return this.token ? text.split(this.token).join("[token]") : text;
  }

  /** The error a rejected fetch or body read stands for. */
  private failure(err: unknown, site: RemoteCallSite, deadline: Deadline, signal: AbortSignal | undefined): Error {
    if (deadline.fired) return deadline.controller.signal.reason as Error;
    if (signal?.aborted) return signal.reason instanceof Error ? signal.reason : Object.assign(new Error("The operation was aborted"), { name: "AbortError" });
    if (this.clientSignal?.aborted) return this.clientSignal.reason instanceof Error ? this.clientSignal.reason : Object.assign(new Error("The client was aborted"), { name: "AbortError" });
    if (this.closing.signal.aborted) return this.closing.signal.reason as Error;
    if (err instanceof DeerFlowError) return err;
    const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
    const why = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : errorMessage(err);
    return new RemoteConnectionError(`Could not reach the DeerFlow server at ${this.baseUrl.origin} (${site.method} ${site.path}): ${this.scrub(why)}`, { cause: err });
  }

  /** Send one request; answers 2xx responses, throws the typed error of anything else. */
  private async send(method: string, path: string, accept: string, opts: RemoteCallOptions, deadline: Deadline): Promise<Response> {
    const site: RemoteCallSite = { method, path };
    const signals = [deadline.controller.signal, this.closing.signal, ...(opts.signal ? [opts.signal] : []), ...(this.clientSignal ? [this.clientSignal] : [])];
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path, opts.query), {
        method,
        headers: this.requestHeaders(accept, opts),
        body: opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined),
        redirect: "manual",
        signal: AbortSignal.any(signals),
      });
    } catch (err) {
      throw this.failure(err, site, deadline, opts.signal);
    }
    if (res.status >= 200 && res.status < 300) return res;
    let text = "";
    try {
      text = await res.text();
    } catch (err) {
      throw this.failure(err, site, deadline, opts.signal);
    }
    if (res.status >= 300 && res.status < 400) {
      let to = "another address";
      const location = res.headers.get("location");
      if (location) {
        try {
          const u = new URL(location, this.url(path, undefined));
          to = `${u.origin}${u.pathname}`;
        } catch {
          /* keep the generic wording */
        }
      }
      throw new RemoteHttpError(site, res.status, null, `The server redirected ${method} ${path} to ${to}. Set baseUrl to the final address: the client follows no redirects, so the token only goes to baseUrl.`);
    }
    let detail: unknown = this.scrub(text);
    try {
      const parsed = JSON.parse(text) as unknown;
      detail = parsed && typeof parsed === "object" && "detail" in parsed ? (parsed as { detail: unknown }).detail : parsed;
      detail = JSON.parse(this.scrub(JSON.stringify(detail)));
    } catch {
      /* not JSON: the text is the detail */
    }
    throw remoteHttpError(site, res.status, detail, res.headers, !!this.token);
  }

  /** A JSON call; the answer is checked against `schema` when given (the unparsed JSON is returned, extra keys kept). */
  async json<T>(method: string, path: string, opts: RemoteCallOptions = {}, schema?: z.ZodType): Promise<T> {
    const deadline = new Deadline(this.timeoutMs, `No answer to ${method} ${path} within ${this.timeoutMs} ms`);
    try {
      const res = await this.send(method, path, "application/json", opts, deadline);
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        throw this.failure(err, { method, path }, deadline, opts.signal);
      }
      let value: unknown;
      try {
        value = text === "" ? null : JSON.parse(text);
      } catch {
        const type = res.headers.get("content-type") ?? "no content type";
        throw new RemoteProtocolError(`${method} ${path} answered ${type}, not JSON: is baseUrl (${this.baseUrl.href}) the DeerFlow gateway?`);
      }
      if (schema) {
        const checked = schema.safeParse(value);
        if (!checked.success) {
          const issue = checked.error.issues[0];
          throw new RemoteProtocolError(`${method} ${path} answered an unexpected shape (${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"})`);
        }
      }
      return value as T;
    } finally {
      deadline.clear();
    }
  }

  /** A call whose body is bytes (artifacts). */
  async bytes(method: string, path: string, opts: RemoteCallOptions = {}): Promise<{ bytes: Buffer; headers: Headers }> {
    const deadline = new Deadline(this.timeoutMs, `No answer to ${method} ${path} within ${this.timeoutMs} ms`);
    try {
      const res = await this.send(method, path, "*/*", opts, deadline);
      try {
        return { bytes: Buffer.from(await res.arrayBuffer()), headers: res.headers };
      } catch (err) {
        throw this.failure(err, { method, path }, deadline, opts.signal);
      }
    } finally {
      deadline.clear();
    }
  }

  /**
   * A call answered with `text/event-stream`. `timeoutMs` bounds the wait for
   * the headers, `streamIdleTimeoutMs` every silence after. Stopping the
   * iteration early closes the connection.
   */
  async stream(method: string, path: string, opts: RemoteCallOptions = {}): Promise<RemoteStream> {
    const site: RemoteCallSite = { method, path };
    const deadline = new Deadline(this.timeoutMs, `No answer to ${method} ${path} within ${this.timeoutMs} ms`);
    const idle = new Deadline(this.idleMs, `The stream of ${method} ${path} was silent for ${this.idleMs} ms (the server sends a heartbeat every 15 s by default)`, false);
    const stop = new AbortController();
    const signal = AbortSignal.any([idle.controller.signal, stop.signal, ...(opts.signal ? [opts.signal] : [])]);
    let res: Response;
    try {
      res = await this.send(method, path, "text/event-stream", { ...opts, signal }, deadline);
    } catch (err) {
      idle.clear();
      throw idle.fired ? idle.controller.signal.reason : err;
    } finally {
      deadline.clear();
    }
    const type = res.headers.get("content-type") ?? "";
    if (!type.toLowerCase().startsWith("text/event-stream") || !res.body) {
      idle.clear();
      stop.abort();
      await res.body?.cancel().catch(() => undefined);
      throw new RemoteProtocolError(`${method} ${path} answered ${type || "no content type"}, not an event stream: is baseUrl (${this.baseUrl.href}) the DeerFlow gateway?`);
    }
    const body = res.body;
    const failure = (err: unknown) => this.failure(err, site, idle, opts.signal);
    async function* events(): AsyncGenerator<SseEvent> {
      try {
        yield* readSseEvents(body, { onWait: () => idle.arm(), onChunk: () => idle.clear() });
      } catch (err) {
        throw failure(err);
      } finally {
        idle.clear();
        stop.abort();
      }
    }
    return { headers: res.headers, events: events() };
  }
}
