import { describe, expect, it } from "vitest";
import { newCheckpointId } from "../../src/checkpoints";
import { newAIMessageId } from "../../src/messages";
import { randomBytesPooled, uuid7 } from "../../src/messages/ids";

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
  });

  it("checkpoint ids: UUID v6, strictly increasing, unique", () => {
    const ids = Array.from({ length: 3000 }, () => newCheckpointId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
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
