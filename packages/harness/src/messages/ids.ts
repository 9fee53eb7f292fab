import { randomBytes, randomUUID } from "node:crypto";

/** A fresh message id (UUID v4). */
export function newMessageId(): string {
  return randomUUID();
}

/** A UUID v7: 48-bit epoch milliseconds first, so ids sort by creation time. */
export function uuid7(now: number = Date.now()): string {
  const b = randomBytes(16);
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
