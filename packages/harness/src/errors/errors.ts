/**
 * The rooted error taxonomy of the harness.
 *
 * Every error the harness throws on purpose is a {@link DeerFlowError} with a
 * stable machine-readable `code`. Subclasses group the families (config,
 * model, tool, sandbox, checkpoint, state, run). Callers branch on `code` or
 * `instanceof`, never on message text.
 */

/** Options accepted by every {@link DeerFlowError}. */
export interface DeerFlowErrorOptions {
  /** The underlying error, kept for logs (never shown to clients verbatim). */
  cause?: unknown;
  /** Structured details safe to show to the user (file, key path, limits…). */
  details?: Record<string, unknown>;
}

/** Root of every error the harness raises deliberately. */
export class DeerFlowError extends Error {
  /** Stable code, e.g. `config_invalid`, `model_rate_limited`. */
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, options: DeerFlowErrorOptions = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = new.target.name;
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** A configuration file or value is missing, malformed or inconsistent. */
export class ConfigError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "config_invalid", message, options);
  }
}

/** Classification of a failed model call, used by retry middleware. */
export type ModelErrorKind =
  | "rate_limit"
  | "quota"
  | "auth"
  | "server"
  | "timeout"
  | "connection"
  | "bad_request"
  | "context_length"
  | "content_filter"
  | "empty_response"
  | "unknown";

/** A model provider call failed. Carries what retry logic needs to classify it. */
export class ModelCallError extends DeerFlowError {
  readonly kind: ModelErrorKind;
  /** HTTP status when the provider answered over HTTP. */
  readonly status?: number;
  /** Milliseconds the provider asked us to wait (from `Retry-After`). */
  readonly retryAfterMs?: number;
  /** Provider error type/code string (e.g. `insufficient_quota`). */
  readonly providerCode?: string;

  constructor(
    message: string,
    options: DeerFlowErrorOptions & {
      kind: ModelErrorKind;
      status?: number;
      retryAfterMs?: number;
      providerCode?: string;
    },
  ) {
    super(`model_${options.kind}`, message, options);
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.providerCode = options.providerCode;
  }
}

/** A model configuration problem (unknown provider, no models configured…). */
export class ModelConfigError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "model_config_invalid", message, options);
  }
}

/** A tool failed in a way that should become an error tool message. */
export class ToolError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "tool_failed", message, options);
  }
}

/** Sandbox-level failure (provider unavailable, command could not start…). */
export class SandboxError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "sandbox_error", message, options);
  }
}

/** A path was rejected by the sandbox path policy (traversal, escape, read-only). */
export class PathAccessError extends SandboxError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super(message, { ...options, code: "path_access_denied" });
  }
}

/** Checkpoint store failure or a missing checkpoint. */
export class CheckpointError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "checkpoint_error", message, options);
  }
}

/** An invalid state update (reducer conflict, unknown message id to remove…). */
export class InvalidUpdateError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super("invalid_state_update", message, options);
  }
}

/** The run exceeded its recursion (step) limit. */
export class GraphRecursionError extends DeerFlowError {
  constructor(limit: number) {
    super("recursion_limit", `Recursion limit of ${limit} reached without hitting a stop condition.`, {
      details: { limit },
    });
  }
}

/** The run was cancelled through its AbortSignal. */
export class RunCancelledError extends DeerFlowError {
  constructor(reason?: string) {
    super("run_cancelled", reason ? `Run cancelled: ${reason}` : "Run cancelled", {});
  }
}

/**
 * The run service refused a run operation. `code` says why:
 * `run_conflict` (the thread has an active run and the strategy is
 * `reject`), `run_not_found`, `run_not_cancellable` (already finished),
 * `run_not_active_here` (executing in a process this one cannot reach),
 * `run_service_closed`, `run_backend_failed` (lock, lease or stream backend
 * unavailable), `checkpoint_not_found` (the run's `checkpointId`),
 * `run_not_resumable` (a dead owner's run cannot be executed again here),
 * `run_secrets_not_resumable` (its request carried secrets, which are never
 * stored, so it is not executed again elsewhere without them),
 * `run_stale_owner` (a run record write under a lease epoch the run no
 * longer has: another process took the run over).
 */
export class RunServiceError extends DeerFlowError {
  constructor(code: string, message: string, options: DeerFlowErrorOptions = {}) {
    super(code, message, options);
  }
}

/** Input from a caller (thread id, run options…) is invalid. */
export class ValidationError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "validation_error", message, options);
  }
}

/** A run's stream bridge or signal backend (Redis, SQLite) failed: the affected runs fail, the process keeps serving. */
export class StreamBridgeError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "stream_bridge_failed", message, options);
  }
}

/** True when `err` is a DeerFlowError with the given code. */
export function hasErrorCode(err: unknown, code: string): boolean {
  return err instanceof DeerFlowError && err.code === code;
}

/** Best-effort message of an unknown thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
