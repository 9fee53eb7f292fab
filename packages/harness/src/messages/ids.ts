import { randomFillSync, randomUUID } from "node:crypto";

/**
 * Entropy for ids, drawn from the CSPRNG in 4 KiB blocks: one system call
 * per 256 ids instead of one per id (ids are made several times per run step).
 * Each byte is handed out once.
 */
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

/** Reserve `n` (≤ 4096) unused bytes of the pool, refilling it when too few are left; returns their offset. */
function take(n: number): number {
  if (n > pool.length) throw new RangeError(`at most ${pool.length} bytes at a time`);
  if (poolOffset + n > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += n;
  return at;
}

/** `n` (≤ 4096) fresh random bytes, copied out of the pool. */
export function randomBytesPooled(n: number): Buffer {
  const at = take(n);
  return Buffer.from(pool.subarray(at, at + n));
}

/** `n` (≤ 4096) fresh random bytes as lowercase hex, read straight from the pool (no Buffer per call). */
export function randomHexPooled(n: number): string {
  const at = take(n);
  return pool.toString("hex", at, at + n);
}

/** A fresh message id (UUID v4). */
export function newMessageId(): string {
  return randomUUID();
}

/** A UUID v7: 48-bit epoch milliseconds first, so ids sort by creation time. */
export function uuid7(now: number = Date.now()): string {
  const b = randomBytesPooled(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (b[6] & 0x0f);
  b[8] = 0x80 | (b[8] & 0x3f);
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A fresh id for a model-produced message, in LangChain's current `lc_run--<uuid7>` form. */
export function newAIMessageId(): string {
  return `lc_run--${uuid7()}`;
}

/** A fresh tool-call id, used when a provider did not supply one. */
export function newToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}
