import { errorMessage } from "../errors";

/**
 * The durability side of a run's checkpoint commits (LangGraph's "async" durability).
 *
 * A run queues each checkpoint write and goes on without waiting for it; this tracker
 * keeps the last queued write and the first write failure, so the loop can wait for
 * durability only where it is promised (before a tool with side effects runs, and
 * before the run returns) and fail the run at its next commit after a failed write.
 */
export class CheckpointWrites {
  /** The last queued checkpoint write (settles, never rejects). */
  private last: Promise<void> = Promise.resolve();
  private firstError: Error | undefined;

  /** @param onWait told when a {@link settle} starts (`true`) and ends (`false`): the run's `onDurableWait`. */
  constructor(private readonly onWait?: (waiting: boolean) => void) {}

  /** The first failed write so far, if any (without waiting for pending writes). */
  get error(): Error | undefined {
    return this.firstError;
  }

  /** Track a queued write; its failure, if the first, is kept for {@link settle} and {@link error}. */
  track(durable: Promise<void>): void {
    this.last = durable.catch((err: unknown) => {
      this.firstError ??= err instanceof Error ? err : new Error(errorMessage(err));
    });
  }

  /** Wait until every queued checkpoint write is durable; the first failed one, if any. */
  async settle(): Promise<Error | undefined> {
    const onWait = this.onWait;
    if (!onWait) {
      await this.last;
      return this.firstError;
    }
    onWait(true);
    try {
      await this.last;
    } finally {
      onWait(false);
    }
    return this.firstError;
  }
}
