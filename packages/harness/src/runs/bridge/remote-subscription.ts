import type { StreamItem, StreamListener } from "../backend-types";
import { compareEventIds, formatEventId, parseEventId } from "./event-id";
import type { EventId } from "./event-id";
import { bridgeErrorItem, END_ITEM, gapItem } from "./run-stream";
import type { StreamEventItem } from "./run-stream";

/** One stored entry of a run's stream: an event, or the end marker (`item` undefined). */
export interface StoredEntry {
  at: EventId;
  item: StreamEventItem | undefined;
}

function call(listener: StreamListener, item: StreamItem): void {
  try {
    listener(item);
  } catch {
    // the subscriber's own failure; its owner stops it
  }
}

/**
 * A subscription to a run whose events come from a backend (written by
 * another process, or before a restart): it replays a snapshot of the
 * retained entries, then takes live entries in order. Entries it already
 * has are skipped; a hole in the seqs (trimmed before it read them) ends it
 * with one `gap`. Live entries that arrive while the snapshot is on its way
 * wait until it is in.
 */
export class RemoteSubscription {
  /** The last entry it has (requested or delivered); undefined: from the oldest retained. */
  private last: EventId | undefined;
  private waiting: StoredEntry[] | undefined = [];
  stopped = false;

  constructor(
    readonly runId: string,
    private readonly lastEventId: string | null,
    private readonly listener: StreamListener,
    private readonly onStop: () => void,
  ) {
    this.last = parseEventId(lastEventId);
  }

  /** Replay the retained entries (oldest first), then what arrived meanwhile. False when the subscription ended. */
  replay(entries: StoredEntry[]): boolean {
    if (this.stopped) return false;
    const requested = this.last;
    let first: StoredEntry | undefined;
    let latest: StoredEntry | undefined;
    for (const e of entries) {
      if (!e.item) continue;
      first ??= e;
      latest = e;
    }
    if (requested && first && requested.seq + 1 < first.at.seq && compareEventIds(requested, first.at) < 0) {
      this.finish(gapItem(this.runId, this.lastEventId, first.item!.id, latest!.item!.id));
      return false;
    }
    // An id past everything stored (a client's `Last-Event-ID` is any text of the right shape) resumes after
    // the newest event, as the writer's own window does: otherwise every later entry would count as seen.
    if (requested && latest && compareEventIds(requested, latest.at) > 0) this.last = latest.at;
    const waiting = this.waiting ?? [];
    this.waiting = undefined;
    for (const e of entries) if (!this.take(e)) return false;
    for (const e of waiting) if (!this.take(e)) return false;
    return true;
  }

  /** A live entry. False when the subscription ended. */
  take(e: StoredEntry): boolean {
    if (this.stopped) return false;
    if (this.waiting) {
      this.waiting.push(e);
      return true;
    }
    const last = this.last;
    // The end marker ends the subscription whatever id the client claimed to have seen.
    if (!e.item) {
      this.finish(END_ITEM);
      return false;
    }
    if (last && compareEventIds(e.at, last) <= 0) return true;
    if (last && e.at.seq > last.seq + 1) {
      // Entries between were trimmed before this subscriber read them.
      this.finish(gapItem(this.runId, formatEventId(last.epochMs, last.seq), e.item.id, e.item.id));
      return false;
    }
    this.last = e.at;
    call(this.listener, e.item);
    return true;
  }

  /** The backend failed: an `error` event (with the last id it has, so a reconnect resumes there), then `end`. */
  fail(message: string): void {
    if (this.stopped) return;
    const at = this.last ? formatEventId(this.last.epochMs, this.last.seq) : "0-0";
    this.stop();
    call(this.listener, bridgeErrorItem(at, message));
    call(this.listener, END_ITEM);
  }

  private finish(item: StreamItem): void {
    this.stop();
    call(this.listener, item);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onStop();
  }
}
