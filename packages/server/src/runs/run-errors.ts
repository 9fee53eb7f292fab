import { RunServiceError } from "@deerflow-ts/harness";
import { HttpError } from "../http-error";

/** HTTP status of each run service refusal. */
const STATUS: Record<string, number> = {
  run_conflict: 409,
  run_not_found: 404,
  run_not_cancellable: 409,
  run_not_active_here: 409,
  checkpoint_not_found: 404,
  run_service_closed: 503,
  run_backend_failed: 503,
};

/** The HTTP answer of a run service refusal (undefined for other errors). */
export function runServiceHttpError(err: unknown): HttpError | undefined {
  if (!(err instanceof RunServiceError)) return undefined;
  const status = STATUS[err.code];
  if (!status) return undefined;
  // The run executes in a process this one cannot reach: the client may try again (another worker may answer).
  return new HttpError(status, err.message, err.code === "run_not_active_here" ? { "Retry-After": "1" } : {});
}
