/**
 * A single-consumer async queue: the run loop pushes events, the caller
 * iterates them. Pushing never blocks; iteration ends after `close()`.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  close(): void {
    this.closed = true;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: undefined as never, done: true });
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.head < this.items.length) {
          const value = this.items[this.head++];
          if (this.head > 1024 && this.head * 2 > this.items.length) {
            this.items = this.items.slice(this.head);
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined as never, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: () => {
        this.closed = true;
        this.items = [];
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
  }
}
