import { DeerFlowError } from "../errors";
import type { DeerFlowErrorOptions } from "../errors";

/**
 * A rejected upload, upload listing/deletion or artifact read. `status` is
 * the HTTP status the gateway answers with (400 bad name/path, 404 missing,
 * 413 over a limit), so the gateway and the embedded client fail alike.
 */
export class UploadError extends DeerFlowError {
  /** HTTP status the gateway maps this error to. */
  readonly status: number;

  constructor(code: string, message: string, status: number, options: DeerFlowErrorOptions = {}) {
    super(code, message, options);
    this.status = status;
  }
}
