/**
 * Stream event ids: `{epochMs}-{seq}`, the shape of a Redis stream entry id.
 * `seq` counts a run's entries from 0 without holes, so a reader sees that
 * entries were trimmed away between two it holds (a replay gap) by the
 * numbers alone; `epochMs` never goes back, so the ids also sort the way
 * Redis compares them.
 */

/** A parsed event id. */
export interface EventId {
  epochMs: number;
  seq: number;
}

/** `{epochMs}-{seq}`. */
export function formatEventId(epochMs: number, seq: number): string {
  return `${epochMs}-${seq}`;
}

const EVENT_ID = /^(\d{1,15})-(\d{1,15})$/;

/** Parse an event id; `undefined` when it is not `{int}-{int}` (clients send anything in `Last-Event-ID`). */
export function parseEventId(id: string | null | undefined): EventId | undefined {
  if (!id) return undefined;
  const m = EVENT_ID.exec(id.trim());
  if (!m) return undefined;
  return { epochMs: Number(m[1]), seq: Number(m[2]) };
}

/** Order of two ids as Redis orders stream entries (milliseconds, then seq). */
export function compareEventIds(a: EventId, b: EventId): number {
  return a.epochMs - b.epochMs || a.seq - b.seq;
}

/**
 * Hands out one run's ids: `seq` goes up by one per entry and `epochMs` is
 * the clock, held at the last value when the clock steps back, so every id
 * is strictly greater than the previous one in Redis' order too.
 */
export class EventIdSequencer {
  /** The seq the next entry gets. */
  nextSeq: number;
  private lastMs: number;

  constructor(after?: EventId) {
    this.nextSeq = after ? after.seq + 1 : 0;
    this.lastMs = after ? after.epochMs : 0;
  }

  /** The next id (advances the sequence). */
  next(nowMs: number): { id: string; seq: number } {
    if (nowMs > this.lastMs) this.lastMs = nowMs;
    const seq = this.nextSeq++;
    return { id: formatEventId(this.lastMs, seq), seq };
  }
}
