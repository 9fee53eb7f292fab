import { formatEventId, parseEventId } from "./frame";

/** One buffered run event. */
export interface BufferedEvent {
  seq: number;
  id: string;
  event: string;
  data: unknown;
}

/** What a subscriber receives. */
export type SubscriberItem =
  | { kind: "event"; event: BufferedEvent }
  | { kind: "gap"; data: Record<string, unknown> }
  | { kind: "end" };

/** A push subscriber of {@link RunEventBuffer.listen}: called synchronously. */
export type BufferListener = (item: SubscriberItem) => void;

/**
 * The replay buffer of one run (the "stream bridge"). Keeps the last
 * `capacity` data events for (re)joins; any number of listeners replay from
 * a cursor, then get each new event as it is published. `close()` marks the
 * run finished; listeners then get `end`.
 */
export class RunEventBuffer {
  readonly runId: string;
  private readonly capacity: number;
  private readonly events: BufferedEvent[] = [];
  private nextSeq = 0;
  private closed = false;
  private listeners: BufferListener[] = [];

  constructor(runId: string, capacity = 256) {
    this.runId = runId;
    this.capacity = capacity;
  }

  /** True once the run has ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Append a data event; returns its id. Ignored after close. */
  publish(event: string, data: unknown): string | undefined {
    if (this.closed) return undefined;
    const seq = this.nextSeq++;
    const id = formatEventId(Date.now(), seq);
    this.events.push({ seq, id, event, data });
    if (this.events.length > this.capacity) this.events.shift();
    if (this.listeners.length) {
      const item: SubscriberItem = { kind: "event", event: this.events[this.events.length - 1] };
      for (const l of this.listeners) l(item);
    }
    return id;
  }

  /** Mark the run finished (subscribers get `end` after draining). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const ls = this.listeners;
    this.listeners = [];
    for (const l of ls) l({ kind: "end" });
  }

  private earliestSeq(): number {
    return this.events.length ? this.events[0].seq : this.nextSeq;
  }

  private gapData(requested: string | null): Record<string, unknown> {
    return {
      code: "stream_replay_gap",
      run_id: this.runId,
      requested_event_id: requested,
      earliest_available_event_id: this.events[0]?.id ?? null,
      latest_available_event_id: this.events[this.events.length - 1]?.id ?? null,
      recovery: "reload_durable_state",
    };
  }

  /**
   * Resolve where a subscriber starts from a `Last-Event-ID`:
   * absent/unparsable → oldest retained; a retained id → right after it; an id
   * older than the window → `gap`.
   */
  startCursor(lastEventId: string | null | undefined): { cursor: number } | { gap: Record<string, unknown> } {
    const parsed = parseEventId(lastEventId);
    if (!parsed) return { cursor: this.earliestSeq() };
    const wanted = parsed.seq + 1;
    if (wanted < this.earliestSeq()) return { gap: this.gapData(lastEventId ?? null) };
    return { cursor: Math.min(wanted, this.nextSeq) };
  }

  /**
   * Push-based subscription (the SSE hot path: no promise per event). Replays
   * the retained events from `cursor` synchronously, then calls `listener`
   * for every new event as it is published, and finally with `end` (or with
   * `gap` if `cursor` is older than the retained window). Returns a function
   * that stops the subscription.
   */
  listen(cursor: number, listener: BufferListener): () => void {
    const earliest = this.earliestSeq();
    if (cursor < earliest) {
      listener({ kind: "gap", data: this.gapData(null) });
      return () => {};
    }
    for (let i = cursor - earliest; i < this.events.length; i++) listener({ kind: "event", event: this.events[i] });
    if (this.closed) {
      listener({ kind: "end" });
      return () => {};
    }
    this.listeners.push(listener);
    // Replace rather than splice: a publish iterating the old array stays consistent.
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /**
   * Iterate events from `cursor` (an async view of {@link listen}: events
   * published while the reader is busy are queued for it). Stops after `end`
   * or `gap`, or when `signal` aborts.
   */
  async *subscribe(cursor: number, signal?: AbortSignal): AsyncGenerator<SubscriberItem> {
    const queue: SubscriberItem[] = [];
    let wake: (() => void) | undefined;
    const stop = this.listen(cursor, (item) => {
      queue.push(item);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      while (!signal?.aborted) {
        const item = queue.shift();
        if (!item) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        yield item;
        if (item.kind !== "event") return;
      }
    } finally {
      stop();
      signal?.removeEventListener("abort", onAbort);
    }
  }
}
