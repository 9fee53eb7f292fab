import { randomUUID } from "node:crypto";

/** A fresh message id (UUID v4). */
export function newMessageId(): string {
  return randomUUID();
}

/** A fresh id for a model-produced message, in LangChain's `run-…` style. */
export function newAIMessageId(): string {
  return `run-${randomUUID()}`;
}

/** A fresh tool-call id, used when a provider did not supply one. */
export function newToolCallId(): string {
  return `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
}
