import { describe, expect, it } from "vitest";
import type { StreamItem } from "../../../src/runs/backend-types";
import { RemoteSubscription } from "../../../src/runs/bridge/remote-subscription";
import type { StoredEntry } from "../../../src/runs/bridge/remote-subscription";

const ev = (ms: number, seq: number): StoredEntry => ({ at: { epochMs: ms, seq }, item: { kind: "event", id: `${ms}-${seq}`, event: "values", data: seq } });
const end = (ms: number, seq: number): StoredEntry => ({ at: { epochMs: ms, seq }, item: undefined });
const label = (x: StreamItem) => (x.kind === "event" ? `${x.event}:${x.id}` : x.kind);

function open(lastEventId: string | null) {
  const got: StreamItem[] = [];
  let stopped = 0;
  const sub = new RemoteSubscription("run-1", lastEventId, (x) => got.push(x), () => stopped++);
  return { sub, got, stopped: () => stopped };
}

describe("RemoteSubscription", () => {
  it("holds live entries that arrive during the replay, then delivers each entry once, in order", () => {
    const { sub, got } = open("10-1");
    sub.take(ev(12, 3)); // the reader was quicker than the snapshot
    sub.take(ev(13, 4));
    expect(got).toEqual([]);
    expect(sub.replay([ev(10, 0), ev(10, 1), ev(11, 2), ev(12, 3)])).toBe(true);
    sub.take(ev(13, 4));
    sub.take(end(14, 5));
    expect(got.map(label)).toEqual(["values:11-2", "values:12-3", "values:13-4", "end"]);
  });

  it("ends with one gap when the id is older than the snapshot, or when live entries skip seqs", () => {
    const old = open("10-1");
    expect(old.sub.replay([ev(20, 5), ev(21, 6)])).toBe(false);
    expect(old.got).toEqual([
      {
        kind: "gap",
        data: {
          code: "stream_replay_gap",
          run_id: "run-1",
          requested_event_id: "10-1",
          earliest_available_event_id: "20-5",
          latest_available_event_id: "21-6",
          recovery: "reload_durable_state",
        },
      },
    ]);
    expect(old.stopped()).toBe(1);

    const behind = open(null);
    behind.sub.replay([ev(10, 0)]);
    behind.sub.take(ev(30, 9)); // seqs 1..8 were trimmed before the reader got to them
    behind.sub.take(ev(30, 10));
    expect(behind.got.map(label)).toEqual(["values:10-0", "gap"]);
    expect(behind.got[1]).toMatchObject({ data: { requested_event_id: "10-0", earliest_available_event_id: "30-9" } });
  });

  it("starts from the oldest retained entry without an id, and fails with the last id it has", () => {
    const { sub, got, stopped } = open("garbage");
    sub.replay([ev(10, 4), ev(10, 5)]);
    sub.fail("Redis went away");
    sub.take(ev(11, 6));
    expect(got.map(label)).toEqual(["values:10-4", "values:10-5", "error:10-5", "end"]);
    expect(got[2]).toMatchObject({ data: { message: "Redis went away", name: "StreamBridgeError" } });
    expect(stopped()).toBe(1);
  });
});
