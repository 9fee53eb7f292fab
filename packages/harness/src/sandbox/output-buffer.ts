/**
 * Captures a byte stream keeping at most `cap` bytes: the first half and a
 * rolling last half. Bytes in between are counted and dropped (the stream is
 * still drained so the writer never blocks).
 */
export class HeadTailBuffer {
  private readonly headCap: number;
  private readonly tailCap: number;
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer = Buffer.alloc(0);
  private dropped = 0;

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = Math.floor(cap / 2);
  }

  /** True once bytes had to be dropped. */
  get truncated(): boolean {
    return this.dropped > 0;
  }

  push(chunk: Buffer): void {
    let data = chunk;
    if (this.headLen < this.headCap) {
      const take = Math.min(this.headCap - this.headLen, data.length);
      this.head.push(data.subarray(0, take));
      this.headLen += take;
      data = data.subarray(take);
    }
    if (data.length === 0) return;
    const combined = this.tail.length ? Buffer.concat([this.tail, data]) : data;
    if (combined.length > this.tailCap) {
      this.dropped += combined.length - this.tailCap;
      this.tail = Buffer.from(combined.subarray(combined.length - this.tailCap));
    } else {
      this.tail = Buffer.from(combined);
    }
  }

  /** The captured text, with a marker where bytes were dropped. */
  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    if (!this.dropped) return head + this.tail.toString("utf8");
    return `${head}\n... [output capped: ${this.dropped} bytes dropped] ...\n${this.tail.toString("utf8")}`;
  }
}
