import { afterEach, describe, expect, it, vi } from "vitest";
import { newCheckpointId } from "../../src/checkpoints";
import { newAIMessageId } from "../../src/messages";
import { randomBytesPooled, randomHexPooled, uuid7 } from "../../src/messages/ids";

/** The 100-ns ticks since 1582-10-15 an id of version 6 carries. */
function v6Ticks(id: string): bigint {
  const [high, mid, verLow] = id.split("-");
  return (BigInt(`0x${high}`) << 28n) | (BigInt(`0x${mid}`) << 12n) | BigInt(`0x${verLow.slice(1)}`);
}
const GREGORIAN_OFFSET = 0x01b21dd213814000n;

describe("ids from the pooled random source", () => {
  it("uuid7: version 7, RFC variant, time-ordered, and unique across many pool refills", () => {
    const seen = new Set<string>();
    let last = "";
    for (let i = 0; i < 5000; i++) {
      const id = uuid7(1_700_000_000_000 + i);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(id > last).toBe(true);
      last = id;
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
    expect(newAIMessageId()).toMatch(/^lc_run--[0-9a-f-]{36}$/);
    // the first 48 bits are the epoch milliseconds, as given
    for (const ms of [0, 1, 1_700_000_000_123, 2 ** 48 - 1]) expect(Number.parseInt(uuid7(ms).replace(/-/g, "").slice(0, 12), 16)).toBe(ms);
  });

  it("checkpoint ids: UUID v6, strictly increasing, unique", () => {
    const ids = Array.from({ length: 3000 }, () => newCheckpointId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("checkpoint ids carry the clock in 100-ns ticks since 1582, bumped one tick per id within a millisecond, also across a clock set back", () => {
    const now = vi.spyOn(Date, "now");
    try {
      const ms = 4_102_444_800_000; // 2100-01-01: later than any id this file made on the real clock
      now.mockReturnValue(ms + 1_000_000); // any id made earlier in this file is older than what follows
      const first = newCheckpointId();
      expect(v6Ticks(first)).toBe(BigInt(ms + 1_000_000) * 10_000n + GREGORIAN_OFFSET);
      now.mockReturnValue(ms + 2_000_000);
      const ids = Array.from({ length: 10_002 }, () => newCheckpointId());
      const ticks = ids.map(v6Ticks);
      const base = BigInt(ms + 2_000_000) * 10_000n + GREGORIAN_OFFSET;
      ticks.forEach((t, i) => expect(t).toBe(base + BigInt(i)));
      // 10,000 ids in one millisecond roll into the next one
      expect((ticks[10_000] - GREGORIAN_OFFSET) / 10_000n).toBe(BigInt(ms + 2_000_001));
      // a clock set back: still one tick after the last id
      now.mockReturnValue(ms);
      expect(v6Ticks(newCheckpointId())).toBe(ticks[ticks.length - 1] + 1n);
      for (const id of [first, ...ids]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      now.mockRestore();
    }
  });

  it("randomHexPooled: n fresh bytes as hex, never the same bytes twice", () => {
    const a = randomHexPooled(8);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(randomHexPooled(8)); // across pool refills
    expect(seen.size).toBe(2000);
    expect(() => randomHexPooled(5000)).toThrow(RangeError);
  });

  it("hands each random byte out once: consecutive draws never share bytes, and callers own their copy", () => {
    const a = randomBytesPooled(16);
    const b = randomBytesPooled(16);
    expect(a.equals(b)).toBe(false);
    const copy = Buffer.from(b);
    a.fill(0); // a caller writing into its bytes (as uuid7 does) cannot touch another draw
    expect(b.equals(copy)).toBe(true);
    // Bytes look random: 64 KiB drawn across refills hit (nearly) every byte value.
    const values = new Set<number>();
    for (let i = 0; i < 4096; i++) for (const x of randomBytesPooled(16)) values.add(x);
    expect(values.size).toBeGreaterThan(250);
    expect(() => randomBytesPooled(5000)).toThrow(RangeError);
  });
});
