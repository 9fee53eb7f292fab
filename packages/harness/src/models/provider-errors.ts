import { APICallError } from "@ai-sdk/provider";
import { DeerFlowError, ModelCallError, errorMessage } from "../errors";
import type { ModelErrorKind } from "../errors";
import { redactSecretText } from "../persistence/redact";

const QUOTA_CODES = new Set(["insufficient_quota", "billing_hard_limit_reached", "quota_exceeded", "billing_error", "credit_balance_too_low"]);
const CONTEXT_CODES = new Set(["context_length_exceeded", "string_above_max_length", "request_too_large"]);
const CONTEXT_TEXT = /context (length|window)|maximum context|too many tokens|prompt is too long|input is too long|exceeds the model's/i;

/** Parse `Retry-After` (seconds or HTTP date) / `retry-after-ms` headers into milliseconds. */
export function retryAfterMsFromHeaders(headers: Record<string, string> | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => {
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
    return undefined;
  };
  const ms = get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = get("retry-after");
  if (!ra) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.max(0, Math.round(Number(ra) * 1000));
  const date = Date.parse(ra);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

function providerErrorFields(err: APICallError): { code?: string; message?: string } {
  let body: unknown = err.data;
  if (body === undefined && err.responseBody) {
    try {
      body = JSON.parse(err.responseBody);
    } catch {
      body = undefined;
    }
  }
  const e = body && typeof body === "object" ? ((body as { error?: unknown }).error ?? body) : undefined;
  if (!e || typeof e !== "object") return {};
  const rec = e as Record<string, unknown>;
  const code = typeof rec.code === "string" && rec.code ? rec.code : typeof rec.type === "string" ? rec.type : undefined;
  return { code, message: typeof rec.message === "string" ? rec.message : undefined };
}

function kindFor(status: number | undefined, code: string | undefined, text: string): ModelErrorKind {
  if (code && QUOTA_CODES.has(code)) return "quota";
  if ((code && CONTEXT_CODES.has(code)) || CONTEXT_TEXT.test(text)) return "context_length";
  if (status === 429 || code === "rate_limit_error" || code === "rate_limit_exceeded") return "rate_limit";
  if (status === 401 || status === 403 || code === "authentication_error" || code === "invalid_api_key" || code === "permission_error") return "auth";
  if (status === 408) return "timeout";
  if (status === 413) return "context_length";
  if (status !== undefined && status >= 500) return "server";
  if (code === "overloaded_error" || code === "api_error") return "server";
  if (status !== undefined && status >= 400) return "bad_request";
  return "unknown";
}

const NETWORK_TEXT = /fetch failed|terminated|socket|ECONNREFUSED|ECONNRESET|EPIPE|other side closed|network|UND_ERR/i;

/** True when `err` or one of its causes is a transport failure (refused, reset, closed mid-stream). */
export function isNetworkError(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    const e = cur as { message?: unknown; code?: unknown; cause?: unknown };
    if (typeof e.message === "string" && NETWORK_TEXT.test(e.message)) return true;
    if (typeof e.code === "string" && /^(E[A-Z]+|UND_ERR)/.test(e.code)) return true;
    cur = e.cause;
  }
  return false;
}

/** Context of a failed call used to tell timeouts and cancellations apart. */
export interface ErrorContext {
  provider: string;
  model: string;
  /** True when our own timer aborted the request. */
  timedOut?: boolean;
  timeoutMs?: number;
  /** Known credential values (the configured key) to scrub from the error text besides the recognised shapes. */
  secrets?: readonly string[];
  /** The endpoint called (named in a refused connection's error, credentials masked). */
  baseUrl?: string;
}

/** True when `err` or one of its causes is a refused TCP connection (nothing listens there). */
export function isConnectionRefused(err: unknown): boolean {
  let cur: unknown = err;
  for (let depth = 0; cur && depth < 5; depth++) {
    const e = cur as { message?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
    if (e.code === "ECONNREFUSED" || (typeof e.message === "string" && /ECONNREFUSED/.test(e.message))) return true;
    // happy-eyeballs tries ::1 and 127.0.0.1: an AggregateError holds one refusal per address
    if (Array.isArray(e.errors) && e.errors.some((x) => (x as { code?: unknown })?.code === "ECONNREFUSED")) return true;
    cur = e.cause;
  }
  return false;
}

/** The base_url with any user:password replaced by `***`. */
function maskedBaseUrl(url: string): string {
  return url.replace(/\/\/[^/@\s]*@/, "//***@");
}

/** Whether a base_url points at this machine (a server that refuses there is not running: no point waiting). */
export function isLocalBaseUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\./.test(host) || host === "0.0.0.0";
  } catch {
    return false;
  }
}

/**
 * A stand-in for the provider's own error as the `cause` of a model error:
 * its name, scrubbed message, status and code, but not the response body,
 * request body or headers an `APICallError` carries (they hold the prompt and
 * may echo the credentials). Causes reach logs and error serialisers.
 */
function scrubbedCause(err: unknown, secrets: readonly string[]): Error {
  const src = err as { name?: unknown; message?: unknown; statusCode?: unknown; code?: unknown; cause?: unknown } | null;
  const out = new Error(redactSecretText(errorMessage(err), secrets)) as Error & { statusCode?: number; code?: string };
  out.name = typeof src?.name === "string" ? src.name : "Error";
  if (typeof src?.statusCode === "number") out.statusCode = src.statusCode;
  if (typeof src?.code === "string") out.code = src.code;
  // Transport causes (ECONNRESET, UND_ERR_…) carry no credentials and classify the failure: keep their codes.
  if (src?.cause && typeof src.cause === "object") {
    const c = src.cause as { code?: unknown; message?: unknown };
    out.cause = Object.assign(new Error(redactSecretText(errorMessage(c), secrets)), typeof c.code === "string" ? { code: c.code } : {});
  }
  return out;
}

/**
 * Turn anything a provider threw into a {@link ModelCallError} carrying kind,
 * HTTP status, `Retry-After` and the provider's error code. Never retries.
 * The message and cause are scrubbed of credentials ({@link redactSecretText}):
 * a provider or proxy that echoes `Authorization` / `x-api-key` in its error
 * text must not put the key into the SSE stream, run records or state.
 */
export function toModelCallError(err: unknown, ctx: ErrorContext): ModelCallError {
  if (err instanceof ModelCallError) return err;
  const secrets = ctx.secrets ?? [];
  const made = buildModelCallError(err, ctx);
  return new ModelCallError(redactSecretText(made.message, secrets), {
    kind: made.kind,
    status: made.status,
    retryAfterMs: made.retryAfterMs,
    providerCode: made.providerCode,
    details: made.details,
    cause: err === undefined ? undefined : scrubbedCause(err, secrets),
  });
}

function buildModelCallError(err: unknown, ctx: ErrorContext): ModelCallError {
  const label = `${ctx.provider} model "${ctx.model}"`;
  if (!ctx.timedOut && isConnectionRefused(err)) {
    // Nothing listens at base_url: say where, without the socket error's code (it reads as a crash).
    const where = ctx.baseUrl ? maskedBaseUrl(ctx.baseUrl) : "its base_url";
    return new ModelCallError(`${label}: the model server at ${where} refused the connection (nothing is listening there).`, {
      kind: "connection",
      providerCode: "connection_refused",
      details: { base_url: ctx.baseUrl ? maskedBaseUrl(ctx.baseUrl) : undefined, local: isLocalBaseUrl(ctx.baseUrl) },
      cause: err,
    });
  }
  if (ctx.timedOut) {
    return new ModelCallError(`${label} timed out after ${ctx.timeoutMs ?? "?"} ms without a response.`, { kind: "timeout", cause: err });
  }
  if (APICallError.isInstance(err)) {
    const { code, message } = providerErrorFields(err);
    const status = err.statusCode;
    const text = `${message ?? ""} ${err.message}`;
    const transport = (status === undefined || (status >= 200 && status < 300)) && isNetworkError(err.cause);
    const kind = transport || (status === undefined && !err.responseBody) ? "connection" : kindFor(status, code, text);
    const detail = transport ? `connection lost: ${errorMessage(err.cause)}` : (message ?? err.message);
    return new ModelCallError(`${label} call failed${status && !transport ? ` (HTTP ${status})` : ""}: ${detail}`, {
      kind,
      status: transport ? undefined : status,
      retryAfterMs: retryAfterMsFromHeaders(err.responseHeaders),
      providerCode: code,
      cause: err,
    });
  }
  if (err instanceof DeerFlowError) {
    return new ModelCallError(err.message, { kind: "unknown", cause: err });
  }
  const msg = errorMessage(err);
  const causeCode = (err as { cause?: { code?: string } })?.cause?.code;
  const name = (err as { name?: string })?.name ?? "";
  if (isNetworkError(err)) {
    return new ModelCallError(`${label}: connection failed: ${msg}`, { kind: "connection", cause: err, providerCode: causeCode });
  }
  if (/JSONParseError|TypeValidationError/.test(name) || /JSON|parse|validation/i.test(msg)) {
    return new ModelCallError(`${label} returned a malformed response: ${msg.split("\n")[0]}`, {
      kind: "server",
      providerCode: "invalid_response",
      cause: err,
    });
  }
  return new ModelCallError(`${label} call failed: ${msg}`, { kind: "unknown", cause: err });
}
