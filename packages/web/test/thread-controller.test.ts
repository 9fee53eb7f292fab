import { describe, expect, it } from "vitest";
import type { ApiClient } from "../src/api/client";
import { ThreadController } from "../src/app/thread-controller";
import { rememberRun, recalledRun, type KeyValueStorage } from "../src/stream/session";

function memoryStorage(): KeyValueStorage {
  const m = new Map<string, string>();
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
}

describe("ThreadController.load", () => {
  it("a remembered run that ended after the state was read: the state is read again, so the answer shows", async () => {
    const question = { type: "human", id: "h1", content: "hello" };
    const answer = { type: "ai", id: "a1", content: "Hello!" };
    // The first read is from just before the run's last checkpoint; the run has ended when it is asked about.
    const states = [{ values: { messages: [question] } }, { values: { messages: [question, answer] } }];
    let reads = 0;
    const client = {
      threads: { getState: async () => states[Math.min(reads++, 1)] },
      runs: { get: async () => ({ status: "success" }) },
    } as unknown as ApiClient;
    const storage = memoryStorage();
    rememberRun(storage, "T", "R");
    const c = new ThreadController(client, storage);
    await c.load("T");
    expect(c.getView().messages.map((m) => m.id)).toEqual(["h1", "a1"]);
    expect(c.getView().phase).toBe("idle");
    expect(recalledRun(storage, "T")).toBeUndefined();
  });

  it("a reopened thread whose run was stopped: the view names that turn's question as stopped", async () => {
    const question = { type: "human", id: "h1", content: "slow please" };
    const client = {
      threads: {
        getState: async () => ({ values: { messages: [question] } }),
        messagesPage: async () => ({ data: [{ run_id: "R1", event_type: "llm.human.input", content: { id: "h1" } }], has_more: false, next_before_seq: null }),
      },
      runs: { list: async () => [{ run_id: "R1", status: "interrupted", kwargs: {}, created_at: "2026-01-01T00:00:00Z" }] },
    } as unknown as ApiClient;
    const c = new ThreadController(client, memoryStorage());
    await c.load("T");
    expect(c.getView().stoppedTurns).toEqual(["h1"]);
  });
});
