import { DeerFlowError } from "@deerflow-ts/harness";

/** Stable codes of {@link ChannelError}. */
export type ChannelErrorCode =
  | "channel_config_invalid"
  | "channel_api_error"
  | "channel_rate_limited"
  | "channel_stopped"
  | "channel_queue_full";

/** A channel's failure: bad config, a platform API refusal, a full inbound queue. */
export class ChannelError extends DeerFlowError {
  declare readonly code: ChannelErrorCode;
  /** The platform's HTTP status or error code, when it answered. */
  readonly status?: number;
  constructor(code: ChannelErrorCode, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? {} : { cause: options.cause });
    this.status = options.status;
  }
}
