/** A caller waiting for a queued write (or, for a read, for it to have settled either way). */
interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** One statement to send; a patch job may absorb the patches queued after it. */
interface Job {
  /** The row's fields to write (patch jobs only; later patches merge into it until it is sent). */
  patch: Record<string, unknown> | undefined;
  /** Patches merge only with patches of the same group (e.g. written under the same fence). */
  group: string | undefined;
  send(patch: Record<string, unknown> | undefined): Promise<unknown>;
  waiters: Waiter[];
}

/** One key's writes: the one in flight and the ones behind it, in the order they were handed in. */
interface RowQueue {
  jobs: Job[];
  inflight: Job | undefined;
}

const noop = (): void => undefined;

/**
 * The writes a PostgreSQL store has handed to the pool and not seen answered,
 * per key (a row, or a thread's transcript), so the store reads its own
 * writes and writes each row in order.
 *
 * A pool sends two statements on two connections in either order: a read
 * right after a write the caller did not await (the run recorder queues the
 * final status and returns; a client asks for the run as the stream ends)
 * could miss it, and two patches of one run could land in the wrong order.
 * Here one statement per key is in flight at a time, a read of a key waits
 * for the writes of that key handed in before it (nothing else: a key with
 * nothing pending costs no wait), and listing reads wait for every pending
 * write. Writes start on the next microtask, so the patches of one row that
 * a caller hands in together (or that queue behind a statement in flight)
 * go out as one `UPDATE`: the hot path pays at most one round trip per row
 * and per batch, never one per patch.
 */
export class RowWriteQueues {
  private readonly rows = new Map<string, RowQueue>();
  /** A store-wide write ({@link writeAll}) and everything before it; later writes wait for it. */
  private barrier: Promise<void> | undefined;

  /** Queue a statement on `key` (sent after the key's earlier writes settled). */
  write(key: string, send: () => Promise<unknown>): Promise<void> {
    return new Promise<void>((resolve, reject) => this.enqueue(key, { patch: undefined, group: undefined, send, waiters: [{ resolve, reject }] }));
  }

  /**
   * Queue a patch of the row at `key`: while the key's last queued job is an
   * unsent patch, this one merges into it (later values win; `undefined`
   * fields leave the earlier value), and `send` gets the merged patch.
   * Only patches of one `group` merge (a fenced write is not widened to, or
   * refused with, an unfenced one).
   */
  patch(key: string, patch: Record<string, unknown>, send: (patch: Record<string, unknown>) => Promise<unknown>, group?: string): Promise<void> {
    const last = this.rows.get(key)?.jobs.at(-1);
    if (last?.patch && last.group === group) {
      const merged = last.patch;
      for (const field in patch) if (patch[field] !== undefined) merged[field] = patch[field];
      return new Promise<void>((resolve, reject) => last.waiters.push({ resolve, reject }));
    }
    const own: Record<string, unknown> = {};
    for (const field in patch) if (patch[field] !== undefined) own[field] = patch[field];
    return new Promise<void>((resolve, reject) =>
      this.enqueue(key, { patch: own, group, send: send as Job["send"], waiters: [{ resolve, reject }] }),
    );
  }

  /**
   * A write over many rows (delete a thread's runs, recover orphans): sent
   * once every write handed in before it settled; writes handed in after it
   * wait for it.
   */
  writeAll<T>(send: () => Promise<T>): Promise<T> {
    const before = this.allSettled();
    // Existing queues drain on their own; a new write of their keys starts a queue that waits for this one.
    this.rows.clear();
    const run = before ? before.then(send) : Promise.resolve().then(send);
    const gate = run.then(noop, noop);
    this.barrier = gate;
    void gate.then(() => {
      if (this.barrier === gate) this.barrier = undefined;
    });
    return run;
  }

  /** Settles (never rejects) once the writes of `key` handed in so far did; undefined when none are pending. */
  settled(key: string): Promise<void> | undefined {
    const q = this.rows.get(key);
    const tail = q && (q.jobs.at(-1) ?? q.inflight);
    // Queues in the map started after the current barrier, so waiting for their tail covers it.
    if (tail) return new Promise<void>((resolve) => tail.waiters.push({ resolve, reject: () => resolve() }));
    return this.barrier;
  }

  /** Settles (never rejects) once every write handed in so far did; undefined when none are pending. */
  allSettled(): Promise<void> | undefined {
    const waits: Array<Promise<void>> = [];
    if (this.barrier) waits.push(this.barrier);
    for (const key of this.rows.keys()) {
      const w = this.settled(key);
      if (w) waits.push(w);
    }
    if (!waits.length) return undefined;
    return waits.length === 1 ? waits[0] : Promise.all(waits).then(noop);
  }

  private enqueue(key: string, job: Job): void {
    const queue = this.rows.get(key);
    if (queue) {
      queue.jobs.push(job);
      return;
    }
    const fresh: RowQueue = { jobs: [job], inflight: undefined };
    this.rows.set(key, fresh);
    const start = () => this.next(key, fresh);
    if (this.barrier) void this.barrier.then(start);
    // The next microtask: what the caller hands in within the same turn joins this first statement.
    else queueMicrotask(start);
  }

  private next(key: string, q: RowQueue): void {
    const job = q.jobs.shift();
    q.inflight = job;
    if (!job) {
      if (this.rows.get(key) === q) this.rows.delete(key);
      return;
    }
    let sent: Promise<unknown>;
    try {
      sent = job.send(job.patch);
    } catch (err) {
      sent = Promise.reject(err);
    }
    sent.then(
      () => {
        for (const w of job.waiters) w.resolve();
        this.next(key, q);
      },
      (err: unknown) => {
        for (const w of job.waiters) w.reject(err);
        this.next(key, q);
      },
    );
  }
}
