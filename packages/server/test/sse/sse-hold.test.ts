import { describe, expect, it } from "vitest";
import { createMemoryStreamBridge } from "@deerflow-ts/harness";
import type { RunStreamWriter } from "@deerflow-ts/harness";
import { sseResponse } from "../../src/sse/sse-response";

/** Event names in a chunk of SSE text. */
const names = (text: string) => [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);

/** Event-loop turns: the pump flushes on the next one, so after a few a flush that was due has happened. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
}

/** A run stream on a memory bridge served through the pump; each chunk of the body is one write of the pump. */
async function served(runId: string, heartbeatMs = 60_000) {
  const bridge = createMemoryStreamBridge({ queueMaxsize: 256, ttlSeconds: 60 });
  const writer: RunStreamWriter = await bridge.writer(runId);
  writer.publish("metadata", { run_id: runId });
  const res = sseResponse((push) => bridge.subscribe(runId, null, push), { heartbeatMs });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let read: Promise<string | undefined> | undefined;
  let settled = false;
  /** The next chunk (`undefined`: the body ended); the same promise until it settles. */
  const next = () => {
    if (!read) {
      settled = false;
      read = reader.read().then(({ value, done }) => {
        settled = true;
        read = undefined;
        return done ? undefined : decoder.decode(value);
      });
    }
    return read;
  };
  return { writer, next, arrived: () => settled, close: () => bridge.close() };
}

describe("SSE pump holds (a run waiting for a durable checkpoint)", () => {
  it("keeps the frames it has not sent while the run holds, and sends them with the next ones in one write", async () => {
    const s = await served("r-hold");
    expect(names((await s.next())!)).toEqual(["metadata"]);
    s.writer.publish("messages", 1);
    s.writer.publish("values", 2);
    s.writer.durableWait!(true);
    const held = s.next();
    await turns();
    expect(s.arrived()).toBe(false);
    s.writer.durableWait!(false);
    // What the run publishes right after the wait joins the held frames.
    s.writer.publish("updates", 3);
    expect(names((await held)!)).toEqual(["messages", "values", "updates"]);
    // The run's last step and its end: one write.
    s.writer.publish("values", 4);
    s.writer.durableWait!(true);
    await turns();
    s.writer.durableWait!(false);
    void s.writer.end();
    expect(names((await s.next())!)).toEqual(["values", "end"]);
    expect(await s.next()).toBeUndefined();
    await s.close();
  });

  it("never holds the first write: headers and the first frames go out at once", async () => {
    const s = await served("r-first");
    s.writer.durableWait!(true);
    s.writer.publish("values", 1);
    expect(names((await s.next())!)).toEqual(["metadata", "values"]);
    s.writer.durableWait!(false);
    void s.writer.end();
    expect(names((await s.next())!)).toEqual(["end"]);
    await s.close();
  });

  it("a hold that lasts is cut at the next tick of the heartbeat clock", async () => {
    const s = await served("r-long", 20);
    // Heartbeats (every 20 ms idle here) may come as chunks of their own: skip them.
    const frames = async () => {
      for (;;) {
        const chunk = await s.next();
        if (chunk === undefined || names(chunk).length) return chunk === undefined ? undefined : names(chunk);
      }
    };
    await frames();
    s.writer.publish("values", 1);
    s.writer.durableWait!(true);
    // Never released: the frame still goes out (ticks every 10 ms here).
    expect(await frames()).toEqual(["values"]);
    s.writer.durableWait!(false);
    void s.writer.end();
    expect(await frames()).toEqual(["end"]);
    await s.close();
  });

  it("the end of the stream is never held", async () => {
    const s = await served("r-end");
    await s.next();
    s.writer.durableWait!(true);
    s.writer.publish("values", 1);
    void s.writer.end();
    expect(names((await s.next())!)).toEqual(["values", "end"]);
    expect(await s.next()).toBeUndefined();
    await s.close();
  });
});
