import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appConfigFromText } from "../../../src/config";
import { openRunBackends } from "../../../src/runs";
import { createSqliteStreamBridge, sqliteStreamBridgePath } from "../../../src/runs/bridge";
import { openStorage } from "../../../src/storage";
import { batcherFor } from "../../../src/sqlite";
import { collect, describeStreamBridgeContract, uniqueRunId } from "./bridge-contract";

const dir = mkdtempSync(path.join(tmpdir(), "deerflow-sqlite-bridge-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStreamBridgeContract("sqlite (two connections on one file)", async () => {
  let now = Date.now();
  const clock = () => now;
  const file = path.join(dir, "contract.db");
  const a = createSqliteStreamBridge({ path: file, queueMaxsize: 8, ttlSeconds: 60, clock, pollMs: 5 });
  const b = createSqliteStreamBridge({ path: file, queueMaxsize: 8, ttlSeconds: 60, clock, pollMs: 5 });
  return {
    bridge: a,
    peer: b,
    queueMaxsize: 8,
    ttlSeconds: 60,
    remainingTtlMs: (runId) => a.remainingTtlMs(runId),
    age: async (_runId, ms) => {
      now += ms;
    },
    close: async () => {
      await a.close();
      await b.close();
    },
  };
});

describe("sqlite stream bridge", () => {
  it("keeps a run's events over a restart: replay after an id, and a resumed writer going on after the stored ids", async () => {
    const file = path.join(dir, "restart.db");
    const runId = uniqueRunId("restart");
    const first = createSqliteStreamBridge({ path: file, queueMaxsize: 16, ttlSeconds: 3600 });
    const w = await first.writer(runId);
    const ids = [0, 1, 2].map((n) => w.publish("values", { n }));
    await w.flush();
    await first.close();

    const second = createSqliteStreamBridge({ path: file, queueMaxsize: 16, ttlSeconds: 3600 });
    expect(await second.has(runId)).toBe(true);
    const replay = collect(second, runId, ids[0]);
    await replay.eventCount(2);
    expect(replay.events().map((e) => e.id)).toEqual(ids.slice(1));
    const resumed = await second.writer(runId, { resume: true });
    const next = resumed.publish("values", { n: 3 });
    expect(next.endsWith("-3")).toBe(true);
    await resumed.end();
    expect((await replay.done).map((x) => (x.kind === "event" ? (x.data as { n: number }).n : x.kind))).toEqual([1, 2, 3, "end"]);
    // a subscriber of the resumed run in this process replays from the rows loaded at resume
    const all = await collect(second, runId, null).done;
    expect(all.map((x) => x.kind)).toEqual(["event", "event", "event", "event", "end"]);
    await second.close();
  });

  it("writes through a database it was given (the stores' one), sharing its write batcher, and leaves it open", async () => {
    const db = new Database(path.join(dir, "given.db"));
    db.pragma("journal_mode = WAL");
    const bridge = createSqliteStreamBridge({ db, queueMaxsize: 4, ttlSeconds: 0 });
    const runId = uniqueRunId("given");
    const w = await bridge.writer(runId);
    for (let n = 0; n < 10; n++) w.publish("values", { n });
    await w.end();
    const rows = db.prepare("SELECT seq, kind FROM stream_bridge_events WHERE run_id = ? ORDER BY seq").all(runId) as { seq: number; kind: string }[];
    // four events kept, plus the end marker
    expect(rows).toEqual([
      { seq: 6, kind: "event" },
      { seq: 7, kind: "event" },
      { seq: 8, kind: "event" },
      { seq: 9, kind: "event" },
      { seq: 10, kind: "end" },
    ]);
    expect(await bridge.remainingTtlMs(runId)).toBeUndefined();
    await bridge.close();
    expect(db.open).toBe(true);
    await batcherFor(db).close();
    db.close();
  });

  it("stream_bridge.type: sqlite opens this bridge on {dataDir}/data/stream-bridge.db; a typo in the type is refused naming the key", async () => {
    const dataDir = mkdtempSync(path.join(dir, "backends-"));
    const { config } = appConfigFromText(["sandbox:", "  use: local", "stream_bridge:", "  type: sqlite", "  queue_maxsize: 3", ""].join("\n"));
    const storage = await openStorage(config, { dataDir, needCheckpoints: false, needStores: true });
    const backends = await openRunBackends({ config, storage, stores: storage.stores!, dataDir, log: () => undefined, env: {} });
    expect(backends.bridge.kind).toBe("sqlite");
    expect(backends.shared).toBe(false);
    const runId = uniqueRunId("configured");
    const w = await backends.bridge.writer(runId);
    for (let n = 0; n < 5; n++) w.publish("values", { n });
    await w.end();
    await backends.close();
    await storage.close();
    const db = new Database(sqliteStreamBridgePath(dataDir), { readonly: true });
    const kinds = db.prepare("SELECT seq, kind FROM stream_bridge_events WHERE run_id = ? ORDER BY seq").all(runId);
    db.close();
    // queue_maxsize applies: the last three events and the end marker
    expect(kinds).toEqual([{ seq: 2, kind: "event" }, { seq: 3, kind: "event" }, { seq: 4, kind: "event" }, { seq: 5, kind: "end" }]);
    expect(() => appConfigFromText(["stream_bridge:", "  type: sqlit", ""].join("\n"))).toThrow(/stream_bridge\.type/);
  });
});
