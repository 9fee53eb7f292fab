import { ChannelError } from "./errors";

/**
 * The inbound queue: at most `maxsize` messages waiting, `concurrency`
 * handled at once, and one chat's messages strictly in order (a chat is one
 * thread: its runs follow each other).
 */
export class InboundQueue<T> {
  private readonly waiting: Array<{ key: string; item: T }> = [];
  private readonly busyKeys = new Set<string>();
  private active = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly handler: (item: T) => Promise<void>,
    private readonly options: { maxsize: number; concurrency: number },
  ) {}

  /** Messages waiting or being handled. */
  get size(): number {
    return this.waiting.length + this.active;
  }

  /** Queue an item; throws `channel_queue_full` past `inbound_queue_maxsize`. */
  push(key: string, item: T): void {
    if (this.waiting.length >= this.options.maxsize) {
      throw new ChannelError("channel_queue_full", `The channel inbound queue is full (${this.options.maxsize} messages, channels.inbound_queue_maxsize)`);
    }
    this.waiting.push({ key, item });
    this.pump();
  }

  private pump(): void {
    while (this.active < this.options.concurrency) {
      const index = this.waiting.findIndex((w) => !this.busyKeys.has(w.key));
      if (index < 0) break;
      const [{ key, item }] = this.waiting.splice(index, 1);
      this.active++;
      this.busyKeys.add(key);
      void this.handler(item)
        .catch(() => undefined)
        .finally(() => {
          this.active--;
          this.busyKeys.delete(key);
          this.pump();
          if (this.size === 0) for (const w of this.idleWaiters.splice(0)) w();
        });
    }
  }

  /** Resolves once nothing waits or runs. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
