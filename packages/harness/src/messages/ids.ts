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

/** Every byte's two lowercase hex digits: ids are a few bytes, and joining digits beats `Buffer#toString` on them. */
const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The pool's bytes `at`..`at + n - 1` as hex. */
function poolHex(at: number, n: number): string {
  let out = "";
  for (let i = at; i < at + n; i++) out += HEX[pool[i]];
  return out;
}

/** `n` (≤ 4096) fresh random bytes as lowercase hex, read straight from the pool (no Buffer per call). */
export function randomHexPooled(n: number): string {
  return poolHex(take(n), n);
}

/** A fresh message id (UUID v4). */
export function newMessageId(): string {
  return randomUUID();
}

/**
 * A UUID v7: 48-bit epoch milliseconds first, so ids sort by creation time,
 * then the version, 12 random bits, the RFC variant and 62 random bits.
 * Built from the digits of the pool's bytes (no Buffer per id: a model reply
 * gets one).
 */
export function uuid7(now: number = Date.now()): string {
  const at = take(10);
  const ms = Math.floor(now).toString(16).padStart(12, "0").slice(-12);
  const version = HEX[0x70 | (pool[at] & 0x0f)] + HEX[pool[at + 1]];
  const variant = HEX[0x80 | (pool[at + 2] & 0x3f)] + HEX[pool[at + 3]];
  return `${ms.slice(0, 8)}-${ms.slice(8)}-${version}-${variant}-${poolHex(at + 4, 6)}`;
}

/** A fresh id for a model-produced message, in LangChain's current `lc_run--<uuid7>` form. */
export function newAIMessageId(): string {
  return `lc_run--${uuid7()}`;
}

/** A fresh tool-call id, used when a provider did not supply one. */
export function newToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}
