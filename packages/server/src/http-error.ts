import { DeerFlowError } from "@deerflow-ts/harness";

/**
 * An error that maps to an HTTP status with a client-safe `detail`
 * (FastAPI's `{"detail": ...}` shape).
 */
export class HttpError extends DeerFlowError {
  readonly status: number;
  readonly detail: unknown;
  readonly headers: Record<string, string>;

  constructor(status: number, detail: unknown, headers: Record<string, string> = {}) {
    super(`http_${status}`, typeof detail === "string" ? detail : `HTTP ${status}`, { details: { status } });
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

/** 404 `Thread {id} not found`. */
export function threadNotFound(threadId: string): HttpError {
  return new HttpError(404, `Thread ${threadId} not found`);
}

/** 404 `Run {id} not found`. */
export function runNotFound(runId: string): HttpError {
  return new HttpError(404, `Run ${runId} not found`);
}

/** A pydantic-like 422 validation detail item. */
export interface ValidationIssue {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input?: unknown;
}

/** 422 with a pydantic-like `detail` list. */
export function validationError(issues: ValidationIssue[]): HttpError {
  return new HttpError(422, issues);
}
