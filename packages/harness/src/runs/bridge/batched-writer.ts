import type { RunStreamWriter } from "../backend-types";
import { StreamBridgeError } from "../../errors";
import type { RunStream, StreamEventItem } from "./run-stream";

/** A caller of {@link BatchedRunWriter.flush} waiting for everything up to `seq` to be stored. */
interface FlushWaiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * When a writer is in doubt whether it still owns its run: after `afterMs`
 * without a confirmed write (on `clock`), e.g. a process frozen or starved
 * past its lease and grace, which another process may have taken over
 * meanwhile. An event published in doubt reaches this process's subscribers
 * only once the backend stored it, so a replaced owner's late events are
 * never shown here; a refused write fails them with the last id the stream
 * really holds.
 */
export interface WriterDoubt {
  afterMs: number;
  clock: () => number;
}

/** What a writer tells its bridge (see {@link RunWriters}). */
export interface WriterHost {
  schedule(w: BatchedRunWriter): void;
  forget(w: BatchedRunWriter): void;
}

/**
 * One run's writer over a backend that stores events in batches (the SQLite
 * and Redis bridges): this process's subscribers get each event at once
 * from the run's local window, and the backend gets the events published
 * during one event-loop turn (or a full batch) in one write, through the
 * subclass's {@link write}. A publish allocates the event's item and
 * nothing else; `flush` waiters and the write's callbacks exist per batch.
 */
export abstract class BatchedRunWriter implements RunStreamWriter {
  private pending: StreamEventItem[] = [];
  /** The end marker's id once `end()` was called and until it is sent. */
  private pendingEnd: string | undefined;
  /** The seq of the newest entry the backend confirmed. */
  private storedSeq: number;
  /** The id of that entry (null before any): the id a failed or abandoned stream's `error` carries. */
  private storedId: string | null;
  /** The seq of the newest entry published (events and the end marker). */
  private lastSeq: number;
  private waiters: FlushWaiter[] = [];
  private error: StreamBridgeError | undefined;
  private ended = false;
  /** When the backend last confirmed a write (or the writer opened); see {@link WriterDoubt}. */
  private confirmedAt: number;
  /** Events published in doubt, delivered once stored (undefined: delivered at once). */
  private held: { item: StreamEventItem; seq: number }[] | undefined;
  /** The end marker's seq while the end waits for its write too. */
  private heldEndSeq: number | undefined;

  constructor(
    private readonly writers: WriterHost,
    readonly runId: string,
    readonly stream: RunStream,
    /** Events sent in one write at most; a larger burst goes out in several. */
    private readonly maxBatch = Number.POSITIVE_INFINITY,
    private readonly doubt?: WriterDoubt,
  ) {
    this.storedSeq = stream.ids.nextSeq - 1;
    this.storedId = stream.latestId;
    this.lastSeq = this.storedSeq;
    this.confirmedAt = doubt ? doubt.clock() : 0;
  }

  /** True when a publish now must wait for its write before local subscribers see it. */
  private inDoubt(): boolean {
    const d = this.doubt;
    return d !== undefined && (this.held !== undefined || d.clock() - this.confirmedAt > d.afterMs);
  }

  /**
   * Store `events` (in order) and, with `endId`, the end marker after them;
   * called with one batch at a time, in publish order, and never again after
   * a write failed.
   */
  protected abstract write(events: StreamEventItem[], endId: string | undefined): Promise<unknown>;

  /** The error `flush` rejects with and the subscribers see once a write failed. */
  protected abstract failure(err: unknown): StreamBridgeError;

  publish(event: string, data: unknown): string {
    if (this.ended || this.error) return this.stream.ids.next(Date.now()).id;
    let item: StreamEventItem;
    if (this.inDoubt()) {
      const next = this.stream.ids.next(Date.now());
      item = { kind: "event", id: next.id, event, data };
      (this.held ??= []).push({ item, seq: next.seq });
    } else {
      item = this.stream.append(event, data, Date.now());
    }
    this.lastSeq = this.stream.ids.nextSeq - 1;
    this.pending.push(item);
    if (this.pending.length >= this.maxBatch) this.send();
    else this.writers.schedule(this);
    return item.id;
  }

  async end(): Promise<void> {
    if (!this.ended && !this.error) {
      this.ended = true;
      this.pendingEnd = this.stream.ids.next(Date.now()).id;
      this.lastSeq = this.stream.ids.nextSeq - 1;
      this.writers.schedule(this);
      if (this.held) this.heldEndSeq = this.lastSeq;
      else this.stream.end();
    }
    await this.flush();
    this.writers.forget(this);
  }

  /** See {@link RunStreamWriter.durableWait}: this process's subscribers hold what they have not sent for the wait. */
  durableWait(waiting: boolean): void {
    if (waiting) this.stream.hold();
    else this.stream.release();
  }

  flush(): Promise<void> {
    if (this.error) return Promise.reject(this.error);
    if (this.storedSeq >= this.lastSeq) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.waiters.push({ seq: this.lastSeq, resolve, reject }));
  }

  /** Hand what is pending to the backend as one write (once per turn by {@link RunWriters}, or when a batch is full). */
  send(): void {
    if (this.error || (!this.pending.length && this.pendingEnd === undefined)) return;
    const batch = this.pending;
    this.pending = [];
    const endId = this.pendingEnd;
    this.pendingEnd = undefined;
    const upTo = this.lastSeq;
    const upToId = endId ?? batch[batch.length - 1].id;
    let written: Promise<unknown>;
    try {
      written = this.write(batch, endId);
    } catch (err) {
      written = Promise.reject(err);
    }
    written.then(
      () => this.stored(upTo, upToId),
      (err: unknown) => this.failed(err),
    );
  }

  private stored(seq: number, id: string): void {
    if (this.error) return;
    if (seq > this.storedSeq) {
      this.storedSeq = seq;
      this.storedId = id;
    }
    if (this.doubt) this.confirmedAt = this.doubt.clock();
    if (this.held) this.release();
    if (!this.waiters.length) return;
    const still: FlushWaiter[] = [];
    for (const w of this.waiters) (w.seq <= this.storedSeq ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  /** Deliver the held events the backend now holds; once none is left, events go out at once again. */
  private release(): void {
    const held = this.held!;
    let n = 0;
    while (n < held.length && held[n].seq <= this.storedSeq) this.stream.push(held[n++].item);
    this.held = n === held.length ? undefined : held.slice(n);
    if (this.held === undefined && this.heldEndSeq !== undefined && this.heldEndSeq <= this.storedSeq) {
      this.heldEndSeq = undefined;
      this.stream.end();
    }
  }

  private failed(err: unknown): void {
    if (!this.error) this.stop(this.failure(err));
  }

  /** Stop with `error`: waiters reject, held events are dropped, subscribers get it (then `end`). */
  private stop(error: StreamBridgeError): void {
    this.error = error;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(this.error);
    // Held events were never stored: subscribers get the error with the last id the backend confirmed.
    this.held = undefined;
    this.heldEndSeq = undefined;
    this.stream.fail(this.error.message, this.storedId);
    this.writers.forget(this);
  }

  /**
   * Another process owns the run now: store nothing more (what is pending
   * is dropped, a write in flight is ignored), drop the held events, and
   * end this process's subscribers with an `error` at the last confirmed
   * id, then `end`. `flush` rejects with the same error from now on.
   */
  abandon(message: string): void {
    if (this.error) return;
    this.pending = [];
    this.pendingEnd = undefined;
    this.stop(new StreamBridgeError(message, { code: "stream_bridge_stale_writer", details: { run_id: this.runId } }));
  }
}

/**
 * The writers of one bridge in this process: the runs written here (local
 * subscribers read their windows synchronously) and the batching — each
 * writer with something pending sends once per event-loop turn.
 */
export class RunWriters<W extends BatchedRunWriter> implements WriterHost {
  /** Runs written by this process, by run id. */
  readonly local = new Map<string, W>();
  private readonly dirty = new Set<BatchedRunWriter>();
  private scheduled = false;
  private readonly sendAll = (): void => {
    this.scheduled = false;
    const writers = [...this.dirty];
    this.dirty.clear();
    for (const w of writers) w.send();
  };

  /** A writer has something to send: it goes out at the end of this turn with the others'. */
  schedule(w: BatchedRunWriter): void {
    this.dirty.add(w);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.sendAll);
    }
  }

  /** The run ended (or its writes failed): later subscribers read the backend. */
  forget(w: BatchedRunWriter): void {
    if (this.local.get(w.runId) === w) this.local.delete(w.runId);
  }

  /** Send everything pending now and wait until what the local writers published is stored (failures are theirs to report). */
  async drain(): Promise<void> {
    this.sendAll();
    await Promise.all([...this.local.values()].map((w) => w.flush().catch(() => {})));
  }
}
