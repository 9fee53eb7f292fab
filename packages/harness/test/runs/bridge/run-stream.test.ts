import { describe, expect, it } from "vitest";
import type { StreamItem, StreamListener } from "../../../src/runs/backend-types";
import { createMemoryStreamBridge } from "../../../src/runs/bridge";
import { RunStream } from "../../../src/runs/bridge/run-stream";

/** A listener that records what it gets: items as their event names, holds as `hold`/`release`. */
function recorder(): { listener: StreamListener; log: string[] } {
  const log: string[] = [];
  const listener: StreamListener = Object.assign((item: StreamItem) => void log.push(item.kind === "event" ? item.event : item.kind), {
    onHold: (held: boolean) => void log.push(held ? "hold" : "release"),
  });
  return { listener, log };
}

describe("RunStream holds", () => {
  it("tells its listeners when a hold starts and when the last one ends; events are still delivered at once", () => {
    const s = new RunStream("r-hold", 16, Number.POSITIVE_INFINITY);
    const a = recorder();
    s.listen(null, a.listener);
    s.append("values", 1, 1_000);
    s.hold();
    s.hold(); // a second hold while one is in force: nothing to tell
    s.append("updates", 2, 1_001);
    s.release();
    expect(a.log).toEqual(["values", "hold", "updates"]);
    s.release();
    s.release(); // more releases than holds: ignored
    expect(a.log).toEqual(["values", "hold", "updates", "release"]);
  });

  it("a listener that joins during a hold is told after its replay; plain listeners and throwing ones do not stop the others", () => {
    const s = new RunStream("r-join", 16, Number.POSITIVE_INFINITY);
    const plain: string[] = [];
    s.listen(null, (item) => void plain.push(item.kind));
    s.listen(null, Object.assign(() => {}, { onHold: () => { throw new Error("closed socket"); } }));
    s.append("values", 1, 1_000);
    s.hold();
    const late = recorder();
    s.listen(null, late.listener);
    s.release();
    expect(late.log).toEqual(["values", "hold", "release"]);
    expect(plain).toEqual(["event"]);
  });

  it("ends clear a hold: no release after `end`, and a new hold on an ended stream tells nobody", () => {
    const s = new RunStream("r-end", 16, Number.POSITIVE_INFINITY);
    const a = recorder();
    s.listen(null, a.listener);
    s.hold();
    s.end();
    s.release();
    s.hold();
    expect(a.log).toEqual(["hold", "end"]);
    const f = new RunStream("r-fail", 16, Number.POSITIVE_INFINITY);
    const b = recorder();
    f.listen(null, b.listener);
    f.hold();
    f.fail("backend down");
    f.release();
    expect(b.log).toEqual(["hold", "error", "end"]);
  });

  it("the memory bridge's writer holds its run's stream for a durable wait", async () => {
    const bridge = createMemoryStreamBridge({ queueMaxsize: 16, ttlSeconds: 60 });
    const writer = await bridge.writer("r-bridge");
    const a = recorder();
    bridge.subscribe("r-bridge", null, a.listener);
    writer.publish("values", 1);
    writer.durableWait?.(true);
    writer.publish("updates", 2);
    writer.durableWait?.(false);
    await writer.end();
    expect(a.log).toEqual(["values", "hold", "updates", "release", "end"]);
    await bridge.close();
  });
});
