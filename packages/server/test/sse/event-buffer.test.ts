import { describe, expect, it } from "vitest";
import { RunEventBuffer } from "../../src/sse/event-buffer";
import type { SubscriberItem } from "../../src/sse/event-buffer";
import { formatFrame, parseEventId } from "../../src/sse/frame";

async function drain(it: AsyncIterable<SubscriberItem>): Promise<SubscriberItem[]> {
  const out: SubscriberItem[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("RunEventBuffer", () => {
  it("keeps the last N events, resumes after an id, and reports a gap for evicted ids", async () => {
    const b = new RunEventBuffer("r1", 3);
    const ids = ["a", "b", "c", "d", "e"].map((e) => b.publish("values", { e })!);
    b.close();
    expect(ids.map((id) => parseEventId(id)!.seq)).toEqual([0, 1, 2, 3, 4]);
    const all = await drain(b.subscribe((b.startCursor("-1") as { cursor: number }).cursor));
    expect(all.map((x) => (x.kind === "event" ? x.event.data : x.kind))).toEqual([{ e: "c" }, { e: "d" }, { e: "e" }, "end"]);
    const after = b.startCursor(ids[3]) as { cursor: number };
    expect((await drain(b.subscribe(after.cursor))).map((x) => x.kind)).toEqual(["event", "end"]);
    const gap = b.startCursor(ids[0]);
    expect("gap" in gap && gap.gap).toMatchObject({ earliest_available_event_id: ids[2], latest_available_event_id: ids[4] });
    expect(b.publish("values", {})).toBeUndefined();
  });

  it("wakes waiting subscribers on publish and stops on abort", async () => {
    const b = new RunEventBuffer("r2");
    const ac = new AbortController();
    const got: SubscriberItem[] = [];
    const p = (async () => {
      for await (const x of b.subscribe(0, ac.signal)) got.push(x);
    })();
    await new Promise((r) => setTimeout(r, 10));
    b.publish("custom", { n: 1 });
    await new Promise((r) => setTimeout(r, 10));
    expect(got).toHaveLength(1);
    ac.abort();
    await p;
    expect(got).toHaveLength(1);
  });

  it("listen() replays from a cursor, then pushes new events synchronously, then end", () => {
    const b = new RunEventBuffer("r3", 2);
    b.publish("metadata", { n: 0 });
    b.publish("values", { n: 1 });
    const got: string[] = [];
    const label = (x: SubscriberItem) => (x.kind === "event" ? `${x.event.event}:${(x.event.data as { n: number }).n}` : x.kind);
    const stop = b.listen(0, (x) => got.push(label(x)));
    expect(got).toEqual(["metadata:0", "values:1"]);
    b.publish("values", { n: 2 });
    expect(got).toEqual(["metadata:0", "values:1", "values:2"]);
    // a second listener that detaches itself mid-publish does not disturb the first
    const other: string[] = [];
    const stopOther: () => void = b.listen(3, (x) => {
      other.push(label(x));
      stopOther?.();
    });
    b.publish("values", { n: 3 });
    b.publish("values", { n: 4 });
    expect(other).toEqual(["values:3"]);
    expect(got.slice(-2)).toEqual(["values:3", "values:4"]);
    stop();
    b.publish("values", { n: 5 });
    expect(got.at(-1)).toBe("values:4");
    // a cursor older than the retained window gets a gap; a listener on a closed buffer gets the rest and end
    const late: string[] = [];
    b.listen(0, (x) => late.push(label(x)));
    expect(late).toEqual(["gap"]);
    b.close();
    const afterClose: string[] = [];
    b.listen(5, (x) => afterClose.push(label(x)));
    expect(afterClose).toEqual(["values:5", "end"]);
  });

  it("formats frames event → data → id and keeps UTF-8", () => {
    expect(formatFrame("messages", ["é", { a: 1 }], "1-0")).toBe('event: messages\ndata: ["é",{"a":1}]\nid: 1-0\n\n');
    expect(formatFrame("x", { big: BigInt(5) })).toBe('event: x\ndata: {"big":"5"}\n\n');
  });
});
