import { randomUUID } from "node:crypto";
import type { Context } from "hono";

/** The request and response header carrying a request's id. */
export const REQUEST_ID_HEADER = "X-Request-Id";

/** What a caller's request id may be: 1–128 visible characters of a token (no spaces, quotes or control characters). */
const VALID_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

const REQUEST_ID_VAR = "deerflowRequestId";

/**
 * The request's id: the caller's `X-Request-Id` when it is a valid token
 * (a proxy's or a client's, so their logs and ours line up), else a new UUID.
 * An invalid one is replaced rather than refused: a log correlation header
 * never fails a request, and it never carries text into a log line.
 */
export function acceptRequestId(header: string | undefined): string {
  return header !== undefined && VALID_REQUEST_ID.test(header) ? header : randomUUID();
}

/** Record the request's id on the context (the access log sets it). */
export function setRequestId(c: Context, id: string): void {
  c.set(REQUEST_ID_VAR as never, id as never);
}

/** The request's id, when the access log is on. */
export function requestIdOf(c: Context): string | undefined {
  return c.get(REQUEST_ID_VAR as never) as string | undefined;
}
