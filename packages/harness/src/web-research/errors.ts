import { ToolError } from "../errors";

/** Why a web request failed; the tools turn each kind into a readable error message. */
export type WebRequestErrorKind = "blocked" | "invalid_url" | "timeout" | "too_large" | "connection" | "too_many_redirects" | "aborted";

/**
 * A web request failed before an HTTP status was available (refused by the
 * SSRF guard, timed out, too large, connection error). Code `web_<kind>`.
 */
export class WebRequestError extends ToolError {
  readonly kind: WebRequestErrorKind;

  constructor(kind: WebRequestErrorKind, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { ...options, code: `web_${kind}` });
    this.kind = kind;
  }
}

/** A URL was refused by the SSRF guard (private, loopback, metadata address; bad scheme). */
export class BlockedUrlError extends WebRequestError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("blocked", message, { details });
  }
}

/**
 * A search/fetch provider answered with an error (HTTP status, bad JSON,
 * unexpected shape) or could not be reached. The message names the provider
 * and never contains the API key.
 */
export class WebProviderError extends ToolError {
  readonly provider: string;
  readonly status?: number;
  readonly retryAfterSeconds?: number;

  constructor(provider: string, message: string, options: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, { code: "web_provider_error", cause: options.cause, details: { provider, status: options.status } });
    this.provider = provider;
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
