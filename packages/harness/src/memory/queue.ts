/**
 * The debounced update queue. Each finished run enqueues its conversation;
 * a newer conversation for the same (thread, user, agent) replaces the
 * pending one (it contains it), and processing waits `debounce_seconds` after
 * the last enqueue so a burst of turns costs one updater call. Past
 * `queue_max_depth` pending items, updates without a signal are refused;
 * signal-bearing ones (a correction, a stated preference…) are always
 * admitted. The timer does not keep the process alive: hosts call `flush()`
 * before exiting and on shutdown.
 */
import { DeerFlowError } from "../errors";
import type { MemorySignal, MemoryTurn } from "./message-filter";

/** The queue refused a non-signal update under backpressure. */
export class MemoryQueueFullError extends DeerFlowError {
  constructor(depth: number) {
    super("memory_queue_full", `memory update queue is full (${depth} pending); update without signals rejected`, { details: { depth } });
  }
}

/** One pending update. */
export interface MemoryQueueItem {
  threadId: string;
  userId: string;
  agentName: string | null;
  turns: MemoryTurn[];
  signals: Set<MemorySignal>;
}

/** Options of {@link MemoryUpdateQueue}. */
export interface MemoryQueueOptions {
  debounceMs: number;
  /** 0 = unlimited. */
  maxDepth: number;
  /** Process one item; a rejection is logged and the item dropped (the next turn re-feeds it). */
  process: (item: MemoryQueueItem) => Promise<unknown>;
  onError?: (err: unknown, item: MemoryQueueItem) => void;
}

const keyOf = (i: Pick<MemoryQueueItem, "threadId" | "userId" | "agentName">) => `${i.threadId}\u0000${i.userId}\u0000${i.agentName ?? ""}`;

/** A process-local debounced queue. */
export class MemoryUpdateQueue {
  private items = new Map<string, MemoryQueueItem>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: MemoryQueueOptions) {}

  /** Pending (not yet started) items. */
  get pending(): number {
    return this.items.size;
  }

  /** True while a batch is being processed. */
  get processing(): boolean {
    return this.running !== null;
  }

  /**
   * Queue a conversation (replacing a pending one for the same key, merging signals) and restart the debounce timer.
   * @throws MemoryQueueFullError for a new non-signal item when the queue is at `maxDepth`.
   */
  add(item: MemoryQueueItem): void {
    if (this.closed) return;
    const key = keyOf(item);
    const existing = this.items.get(key);
    const { maxDepth } = this.options;
    if (!existing && !item.signals.size && maxDepth > 0 && this.items.size >= maxDepth) throw new MemoryQueueFullError(this.items.size);
    const signals = new Set([...(existing?.signals ?? []), ...item.signals]);
    // Re-insert so the coalesced item moves to the back (Map keeps insertion order).
    this.items.delete(key);
    this.items.set(key, { ...item, signals });
    this.schedule(this.options.debounceMs);
  }

  /** Drop pending items of a thread (it was deleted). Returns how many were dropped. */
  dropThread(threadId: string, userId: string): number {
    let n = 0;
    for (const [k, v] of this.items) {
      if (v.threadId === threadId && v.userId === userId) {
        this.items.delete(k);
        n++;
      }
    }
    return n;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, ms);
    this.timer.unref?.();
  }

  private drain(): Promise<void> {
    if (this.running) return this.running;
    if (!this.items.size) return Promise.resolve();
    const batch = [...this.items.values()];
    this.items = new Map();
    this.running = (async () => {
      for (const item of batch) {
        try {
          await this.options.process(item);
        } catch (err) {
          this.options.onError?.(err, item);
        }
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Process everything now (pending and in flight) and wait for it. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.running || this.items.size) {
      if (this.running) await this.running;
      else await this.drain();
    }
  }

  /** Flush within `timeoutMs`, then refuse new items. Resolves true when everything was processed. */
  async close(timeoutMs: number): Promise<boolean> {
    let timeout: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      this.flush().then(() => true),
      new Promise<boolean>((r) => {
        timeout = setTimeout(() => r(false), timeoutMs);
        timeout.unref?.();
      }),
    ]);
    if (timeout) clearTimeout(timeout);
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    return done;
  }
}
