import type { StreamGap, StreamItem, StreamListener } from "../backend-types";
import { EventIdSequencer, parseEventId } from "./event-id";
import type { EventId } from "./event-id";

/** An event item as delivered (one object per event, shared by every listener). */
export type StreamEventItem = Extract<StreamItem, { kind: "event" }>;

const END: StreamItem = Object.freeze({ kind: "end" }) as StreamItem;

/** The `gap` payload (the same on every backend). */
export function gapItem(
  runId: string,
  requested: string | null,
  earliest: string | null,
  latest: string | null,
): StreamItem {
  const data: StreamGap = {
    code: "stream_replay_gap",
    run_id: runId,
    requested_event_id: requested,
    earliest_available_event_id: earliest,
    latest_available_event_id: latest,
    recovery: "reload_durable_state",
  };
  return { kind: "gap", data };
}

/** The `error` event a subscriber gets when the backend under its stream failed (then `end`). */
export function bridgeErrorItem(id: string, message: string): StreamEventItem {
  return { kind: "event", id, event: "error", data: { message, name: "StreamBridgeError" } };
}

/** Call a listener; one that throws must not stop the writer or the other listeners. */
function deliver(listener: StreamListener, item: StreamItem): void {
  try {
    listener(item);
  } catch {
    // The subscriber's own failure (e.g. a closed socket); it is detached by its owner.
  }
}

/** Tell a listener that takes holds that one started or ended (one that throws is its owner's to detach, as above). */
function tellHold(listener: StreamListener, held: boolean): void {
  if (!listener.onHold) return;
  try {
    listener.onHold(held);
  } catch {
    // as in deliver
  }
}

/**
 * One run's retained events in this process: the last `capacity` events
 * (seqs contiguous, so an event's seq is `firstSeq + index`), the listeners
 * that get each new event synchronously, and whether the run ended. The
 * memory bridge is a map of these; the SQLite and Redis bridges keep one per
 * run written here so local subscribers never wait on the backend.
 */
export class RunStream {
  readonly runId: string;
  private readonly capacity: number;
  /** Retained events from index `head` on (the prefix is dropped in bulk, not by `shift()` per event). */
  private events: StreamEventItem[] = [];
  private head = 0;
  private firstSeq: number;
  readonly ids: EventIdSequencer;
  private listeners: StreamListener[] = [];
  private ended = false;
  /** Holds in force (see {@link hold}). */
  private holds = 0;
  /** Epoch ms after which the stream is dropped (refreshed on each append). */
  expiresAt: number;
  /** A writer of this process holds it (a quiet run, e.g. one long tool call, must not expire under its subscribers). */
  writing = false;

  constructor(runId: string, capacity: number, expiresAt: number, after?: EventId) {
    this.runId = runId;
    this.capacity = Math.max(1, capacity);
    this.ids = new EventIdSequencer(after);
    this.firstSeq = this.ids.nextSeq;
    this.expiresAt = expiresAt;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Number of retained events. */
  get size(): number {
    return this.events.length - this.head;
  }

  /** True when the stream has retained events or its end. */
  get hasEntries(): boolean {
    return this.size > 0 || this.ended;
  }

  get earliestId(): string | null {
    return this.size ? this.events[this.head].id : null;
  }

  get latestId(): string | null {
    return this.size ? this.events[this.events.length - 1].id : null;
  }

  /** Retained events, oldest first (a copy). */
  retained(): StreamEventItem[] {
    return this.events.slice(this.head);
  }

  /** Append an event with the next id and push it to the listeners. */
  append(event: string, data: unknown, nowMs: number): StreamEventItem {
    const { id } = this.ids.next(nowMs);
    return this.push({ kind: "event", id, event, data });
  }

  /**
   * Append an event whose id was assigned elsewhere (restored from a
   * backend, or written by another process): it must be the next seq.
   */
  push(item: StreamEventItem): StreamEventItem {
    if (this.size === 0) this.firstSeq = parseEventId(item.id)?.seq ?? this.firstSeq;
    this.events.push(item);
    if (this.events.length - this.head > this.capacity) {
      this.head++;
      this.firstSeq++;
      // Compact once the dropped prefix is as long as the window: amortised O(1) per event.
      if (this.head >= this.capacity) {
        this.events = this.events.slice(this.head);
        this.head = 0;
      }
    }
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) deliver(ls[i], item);
    return item;
  }

  /**
   * The writer waits for the run's checkpoint writes to be durable, and what
   * it publishes right after the wait follows what it published right
   * before: the listeners that group output into network writes (SSE
   * responses) keep what they have not sent yet until {@link release}, so
   * both go out together. Events are still appended and delivered at once.
   */
  hold(): void {
    if (this.ended || this.holds++ > 0) return;
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) tellHold(ls[i], true);
  }

  /** The wait of a {@link hold} is over (after the last one: the listeners are told). */
  release(): void {
    if (this.holds === 0 || --this.holds > 0 || this.ended) return;
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) tellHold(ls[i], false);
  }

  /** Mark the run finished; listeners get `end`. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.holds = 0;
    const ls = this.listeners;
    this.listeners = [];
    for (const l of ls) deliver(l, END);
  }

  /**
   * The backend under the stream failed (or its writer lost the run): listeners get an `error` event, then `end`;
   * nothing more is delivered. `atId` is the id the error carries (default: the last event's).
   */
  fail(message: string, atId?: string | null): void {
    if (this.ended) return;
    // A subscriber reconnecting with the error's id resumes exactly after what the backend holds.
    const item = bridgeErrorItem(atId ?? this.latestId ?? "0-0", message);
    this.ended = true;
    this.holds = 0;
    const ls = this.listeners;
    this.listeners = [];
    for (const l of ls) {
      deliver(l, item);
      deliver(l, END);
    }
  }

  /**
   * Where a subscription after `lastEventId` starts: the index of the first
   * event to replay, or a gap when the id is older than the window. Absent
   * or unparsable ids start at the oldest retained event; ids past the
   * newest wait for new events.
   */
  private start(lastEventId: string | null): number | StreamItem {
    const parsed = parseEventId(lastEventId);
    if (!parsed) return this.head;
    const wanted = parsed.seq + 1;
    if (wanted < this.firstSeq) return gapItem(this.runId, lastEventId, this.earliestId, this.latestId);
    return this.head + Math.min(wanted - this.firstSeq, this.size);
  }

  /**
   * Replay the retained events after `lastEventId` synchronously, then push
   * each new one as it is appended, then `end` (or a single `gap`). Returns
   * the function that stops the subscription.
   */
  listen(lastEventId: string | null, listener: StreamListener): () => void {
    const start = this.start(lastEventId);
    if (typeof start !== "number") {
      deliver(listener, start);
      return () => {};
    }
    const events = this.events;
    const stop = events.length;
    for (let i = start; i < stop; i++) deliver(listener, events[i]);
    if (this.ended) {
      deliver(listener, END);
      return () => {};
    }
    this.listeners.push(listener);
    if (this.holds > 0) tellHold(listener, true);
    // Replace rather than splice: an append iterating the old array stays consistent.
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** True when a listener is attached. */
  get listened(): boolean {
    return this.listeners.length > 0;
  }

  /** True when the stream may be dropped at `now`: expired, and neither written nor listened to here. */
  expired(now: number): boolean {
    return this.expiresAt <= now && !this.writing && this.listeners.length === 0;
  }
}

export { END as END_ITEM };
