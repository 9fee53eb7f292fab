import type { CheckpointFence, CheckpointRecord } from "../checkpoints/types";

/** What the queue hands to the database. */
export interface ThreadWriteOps {
  /** Store `chain` (each record's parent is the one before it) in one statement, all or nothing; under `fence` when given. */
  putChain(chain: CheckpointRecord[], fence: CheckpointFence | undefined): Promise<void>;
  deleteThread(threadId: string): Promise<void>;
}

type Write =
  | { kind: "put"; record: CheckpointRecord; fence: CheckpointFence | undefined; resolve(): void; reject(err: unknown): void }
  | { kind: "delete"; resolve(): void; reject(err: unknown): void };

interface ThreadQueue {
  items: Write[];
  /** Settles (never rejects) once the queue is empty and nothing is in flight. */
  drained: Promise<void>;
}

/**
 * The checkpoint writes of each thread, in the order they were handed in.
 * The checkpointer queues a child before its parent's commit, and a pool
 * would send two statements on two connections in either order; here one
 * statement per thread is in flight at a time. Writes queued meanwhile that
 * continue one chain (each the parent of the next — the steps of one run)
 * go out together in the next statement, so a run that queues faster than
 * the database answers pays one round trip per batch, not per checkpoint.
 */
export class ThreadWriteQueues {
  private readonly threads = new Map<string, ThreadQueue>();

  constructor(
    private readonly ops: ThreadWriteOps,
    private readonly maxBatch = 64,
  ) {}

  put(record: CheckpointRecord, fence?: CheckpointFence): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue(record.threadId, { kind: "put", record, fence, resolve, reject }));
  }

  delete(threadId: string): Promise<void> {
    return new Promise((resolve, reject) => this.enqueue(threadId, { kind: "delete", resolve, reject }));
  }

  /** Settles once the thread's queued writes did (undefined when none are queued). */
  settled(threadId: string): Promise<void> | undefined {
    return this.threads.get(threadId)?.drained;
  }

  /** Settles once every queued write did. */
  async allSettled(): Promise<void> {
    await Promise.all([...this.threads.values()].map((q) => q.drained));
  }

  private enqueue(threadId: string, write: Write): void {
    const queue = this.threads.get(threadId);
    if (queue) {
      queue.items.push(write);
      return;
    }
    const fresh: ThreadQueue = { items: [write], drained: Promise.resolve() };
    this.threads.set(threadId, fresh);
    // The first write goes out at once (no added latency); later ones wait for it and batch.
    fresh.drained = this.drain(threadId, fresh);
  }

  private async drain(threadId: string, queue: ThreadQueue): Promise<void> {
    const { items } = queue;
    while (items.length) {
      const head = items[0];
      if (head.kind === "delete") {
        items.shift();
        await this.ops.deleteThread(threadId).then(head.resolve, head.reject);
        continue;
      }
      let n = 1;
      for (let prev = head.record; n < items.length && n < this.maxBatch; n++) {
        const next = items[n];
        // (one statement checks one fence: writes under another claim, or none, go in the next one)
        if (next.kind !== "put" || next.record.parentId !== prev.checkpointId || next.fence !== head.fence) break;
        prev = next.record;
      }
      const batch = items.splice(0, n) as Array<Extract<Write, { kind: "put" }>>;
      await this.ops.putChain(batch.map((w) => w.record), head.fence).then(
        () => batch.forEach((w) => w.resolve()),
        (err: unknown) => batch.forEach((w) => w.reject(err)),
      );
    }
    this.threads.delete(threadId);
  }
}
