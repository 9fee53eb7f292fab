import { DeerFlowError } from "../errors";
import type { DeerFlowErrorOptions } from "../errors";

/**
 * Errors of {@link RemoteDeerFlowClient}: the server's answers and the
 * transport's failures as typed harness errors. None of them carries the
 * token, a request header or a request body: only the method, the path, the
 * status and the server's `detail` (which the gateway already keeps
 * client-safe).
 */

/** Root of the remote client's errors (`instanceof` catches them all). */
export class RemoteClientError extends DeerFlowError {}

/** Where a failed call went: `POST /api/threads/…/runs/stream` (no query string, no host). */
export interface RemoteCallSite {
  method: string;
  path: string;
}

/**
 * The server answered with a non-2xx status. `code` is `http_{status}`
 * (the gateway's own HttpError codes); `status` and `detail` are the
 * server's, so `{status: 404}` matches the embedded client's errors too.
 */
export class RemoteHttpError extends RemoteClientError {
  readonly status: number;
  /** The server's `detail` as sent (a string, DeerFlow's `{code, message}`, or a list of validation issues). */
  readonly detail: unknown;
  readonly method: string;
  readonly path: string;

  constructor(site: RemoteCallSite, status: number, detail: unknown, message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? `http_${status}`, message, { ...options, details: { status, method: site.method, path: site.path, ...(options.details ?? {}) } });
    this.status = status;
    this.detail = detail;
    this.method = site.method;
    this.path = site.path;
  }
}

/** Why the server refused the caller (401 or 403). */
export type RemoteAuthReason =
  /** 401 with a token: expired, revoked, unknown or malformed. */
  | "token_refused"
  /** 401 without a token: the server has sign-in enabled. */
  | "not_authenticated"
  /** 403: the token's scopes do not cover the call. */
  | "insufficient_scope"
  /** 403 for another reason (an admin-only route, a CSRF or origin check). */
  | "forbidden";

/**
 * 401/403: the token (or the lack of one) was refused. `code` is the
 * {@link RemoteAuthReason}; `requiredScope` names the missing scope when
 * the server said which.
 */
export class RemoteAuthError extends RemoteHttpError {
  readonly reason: RemoteAuthReason;
  readonly requiredScope: string | undefined;

  constructor(site: RemoteCallSite, status: number, detail: unknown, reason: RemoteAuthReason, message: string, requiredScope?: string) {
    super(site, status, detail, message, { code: reason, details: requiredScope ? { required_scope: requiredScope } : {} });
    this.reason = reason;
    this.requiredScope = requiredScope;
  }
}

/** The server could not be reached, or the connection broke mid-answer. */
export class RemoteConnectionError extends RemoteClientError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super("remote_unreachable", message, options);
  }
}

/** No answer (or, on a stream, no byte) within the configured time. */
export class RemoteTimeoutError extends RemoteClientError {
  readonly timeoutMs: number;

  constructor(message: string, timeoutMs: number) {
    super("remote_timeout", message, { details: { timeout_ms: timeoutMs } });
    this.timeoutMs = timeoutMs;
  }
}

/** The server answered something that is not the gateway's contract (wrong content type, bad JSON, bad SSE). */
export class RemoteProtocolError extends RemoteClientError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super("remote_bad_response", message, options);
  }
}

/**
 * The run itself failed on the server (an `error` event in its stream, or
 * a run record stored as `error`/`timeout`). `errorName` is the server's
 * error class name (`ModelCallError`, …) when it sent one.
 */
export class RemoteRunError extends RemoteClientError {
  readonly errorName: string | undefined;
  readonly runId: string | undefined;
  readonly threadId: string;

  constructor(message: string, info: { threadId: string; runId?: string; errorName?: string; status?: string }) {
    super("run_failed", message, { details: { thread_id: info.threadId, run_id: info.runId ?? null, error_name: info.errorName ?? null, status: info.status ?? "error" } });
    this.errorName = info.errorName;
    this.runId = info.runId;
    this.threadId = info.threadId;
  }
}
