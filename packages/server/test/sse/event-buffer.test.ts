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

  it("formats frames event → data → id and keeps UTF-8", () => {
    expect(formatFrame("messages", ["é", { a: 1 }], "1-0")).toBe('event: messages\ndata: ["é",{"a":1}]\nid: 1-0\n\n');
    expect(formatFrame("x", { big: BigInt(5) })).toBe('event: x\ndata: {"big":"5"}\n\n');
  });
});
