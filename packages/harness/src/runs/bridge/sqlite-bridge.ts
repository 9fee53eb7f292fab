import Database from "better-sqlite3";
import fs from "node:fs";
import path from "node:path";
import type { RunStreamWriter, StreamBridge, StreamListener } from "../backend-types";
import { StreamBridgeError } from "../../errors";
import { batcherFor, deferredStep } from "../../sqlite";
import type { WriteBatcher, WriteStep } from "../../sqlite";
import { parseEventId } from "./event-id";
import { encodeEventData, KIND_END, KIND_EVENT } from "./redis-entries";
import { BatchedRunWriter, RunWriters } from "./batched-writer";
import { RemoteSubscription } from "./remote-subscription";
import type { StoredEntry } from "./remote-subscription";
import { RunStream } from "./run-stream";
import type { StreamEventItem } from "./run-stream";

/**
 * Where `stream_bridge.type: sqlite` keeps the runs' events:
 * `{dataDir}/data/stream-bridge.db`, a file of its own so the events'
 * writes never wait for the stores' write lock (and theirs not for these).
 */
export function sqliteStreamBridgePath(dataDir: string): string {
  return path.join(dataDir, "data", "stream-bridge.db");
}

/** Options of {@link createSqliteStreamBridge}. */
export interface SqliteStreamBridgeOptions {
  /** An open database (e.g. the stores'); its writes share their batcher. Or `path` to open one here. */
  db?: Database.Database;
  path?: string;
  queueMaxsize: number;
  /** A run's events are dropped this long after its last append (0 or less: kept). */
  ttlSeconds: number;
  /** Epoch ms; tests pass a clock they advance. */
  clock?: () => number;
  /** How often subscriptions to runs written elsewhere (another process, before a restart) look for new rows (ms, default 25). */
  pollMs?: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS stream_bridge_events (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  event TEXT,
  data TEXT,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stream_bridge_runs (
  run_id TEXT PRIMARY KEY,
  expires_at INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS stream_bridge_runs_expiry ON stream_bridge_runs (expires_at);
`;

const INSERT = "INSERT INTO stream_bridge_events (run_id, seq, ms, kind, event, data) VALUES (?, ?, ?, ?, ?, ?)";
const TRIM = "DELETE FROM stream_bridge_events WHERE run_id = ? AND kind = 'event' AND seq <= ?";
const TOUCH = "INSERT INTO stream_bridge_runs (run_id, expires_at) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET expires_at = excluded.expires_at";

/** How often (clock ms) writer() deletes the rows of expired runs. */
const SWEEP_EVERY_MS = 60_000;
/** Rows one poll reads per run at most. */
const POLL_LIMIT = 512;

interface Row {
  seq: number;
  ms: number;
  kind: string;
  event: string | null;
  data: string | null;
}

function entryOf(row: Row): StoredEntry {
  const at = { epochMs: row.ms, seq: row.seq };
  if (row.kind === KIND_END) return { at, item: undefined };
  let data: unknown = null;
  if (row.data !== null) {
    try {
      data = JSON.parse(row.data);
    } catch {
      data = row.data;
    }
  }
  return { at, item: { kind: "event", id: `${row.ms}-${row.seq}`, event: row.event ?? "message", data } };
}

interface Shared {
  batcher: WriteBatcher;
  maxlen: number;
  expiresAt(): number | null;
  writers: RunWriters<SqliteRunWriter>;
}

/** One run's writer: the local window gets each event at once, the table gets it in the next batch. */
class SqliteRunWriter extends BatchedRunWriter {
  constructor(
    private readonly shared: Shared,
    runId: string,
    stream: RunStream,
  ) {
    super(shared.writers, runId, stream);
  }

  /** One write of the database's batcher (one transaction with the other stores' writes of this turn). */
  protected write(events: StreamEventItem[], endId: string | undefined): Promise<unknown> {
    const runId = this.runId;
    const steps: WriteStep[] = [];
    let lastEventSeq = -1;
    for (const item of events) {
      const at = parseEventId(item.id)!;
      lastEventSeq = at.seq;
      // The JSON is written at commit, off the publish path.
      steps.push(deferredStep(INSERT, () => [runId, at.seq, at.epochMs, KIND_EVENT, item.event, encodeEventData(item.data)]));
    }
    if (endId !== undefined) {
      const at = parseEventId(endId)!;
      steps.push({ sql: INSERT, params: [runId, at.seq, at.epochMs, KIND_END, null, null] });
    }
    if (lastEventSeq - this.shared.maxlen >= 0) steps.push({ sql: TRIM, params: [runId, lastEventSeq - this.shared.maxlen] });
    steps.push({ sql: TOUCH, params: [runId, this.shared.expiresAt()] });
    return this.shared.batcher.write(steps, [`stream:${runId}`]);
  }

  protected failure(err: unknown): StreamBridgeError {
    const message = err instanceof Error ? err.message : String(err);
    return new StreamBridgeError(`SQLite stream bridge: storing the events of run ${this.runId} failed: ${message}`, {
      code: "stream_bridge_write_failed",
      details: { run_id: this.runId },
    });
  }
}

interface Tail {
  subs: Set<RemoteSubscription>;
  /** The last seq read from the table; undefined until the first replay. */
  cursor: number | undefined;
}

/**
 * The SQLite stream bridge: a run's events in a table, so they survive a
 * restart and a process on the same file can read them. Writes go through
 * the database's write batcher (one transaction per turn with the other
 * stores', no commit of its own per event). Subscribers of runs written in
 * this process get pushes from a local window; others replay the table and
 * then poll it.
 */
export function createSqliteStreamBridge(options: SqliteStreamBridgeOptions): StreamBridge & {
  /** Milliseconds until the run's stored events expire (`undefined`: none stored, or no TTL). For tests and diagnostics. */
  remainingTtlMs(runId: string): Promise<number | undefined>;
} {
  const clock = options.clock ?? Date.now;
  const ttlMs = options.ttlSeconds > 0 ? options.ttlSeconds * 1000 : undefined;
  let db: Database.Database;
  const owned = !options.db;
  if (options.db) db = options.db;
  else {
    if (!options.path) throw new StreamBridgeError("createSqliteStreamBridge needs `db` or `path`.", { code: "stream_bridge_config" });
    if (options.path !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(options.path)), { recursive: true });
    db = new Database(options.path);
    db.pragma("journal_mode = WAL");
    // Atomic commits without an fsync per commit (a power loss may drop the last commits, never corrupts).
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 5000");
  }
  db.exec(SCHEMA);
  const batcher = batcherFor(db);
  const rowsOf = db.prepare<[string], Row>("SELECT seq, ms, kind, event, data FROM stream_bridge_events WHERE run_id = ? ORDER BY seq");
  const rowsAfter = db.prepare<[string, number, number], Row>(
    "SELECT seq, ms, kind, event, data FROM stream_bridge_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
  );
  const expiryOf = db.prepare<[string], { expires_at: number | null }>("SELECT expires_at FROM stream_bridge_runs WHERE run_id = ?");
  const writers = new RunWriters<SqliteRunWriter>();
  const local = writers.local;
  const tails = new Map<string, Tail>();
  let lastSweep = Number.NEGATIVE_INFINITY;
  let poller: NodeJS.Timeout | undefined;
  let closed = false;
  const pollMs = options.pollMs ?? 25;

  const shared: Shared = {
    batcher,
    maxlen: Math.max(1, options.queueMaxsize),
    expiresAt: () => (ttlMs === undefined ? null : clock() + ttlMs),
    writers,
  };

  /** True when the run has rows and they have not expired. */
  function retained(runId: string): boolean {
    const row = expiryOf.get(runId);
    return !!row && (row.expires_at === null || row.expires_at > clock());
  }

  function sweep(): void {
    const now = clock();
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    const expired = "SELECT run_id FROM stream_bridge_runs WHERE expires_at IS NOT NULL AND expires_at <= ?";
    void batcher
      .write([
        { sql: `DELETE FROM stream_bridge_events WHERE run_id IN (${expired})`, params: [now] },
        { sql: "DELETE FROM stream_bridge_runs WHERE expires_at IS NOT NULL AND expires_at <= ?", params: [now] },
      ])
      .catch(() => {
        // Expired rows are invisible to readers anyway; the next sweep deletes them.
      });
  }

  function poll(): void {
    poller = undefined;
    if (closed) return;
    for (const [runId, tail] of tails) {
      if (tail.cursor === undefined || tail.subs.size === 0) continue;
      let rows: Row[];
      try {
        rows = rowsAfter.all(runId, tail.cursor, POLL_LIMIT);
      } catch (err) {
        const message = `SQLite stream bridge: reading run ${runId} failed: ${err instanceof Error ? err.message : String(err)}`;
        for (const sub of [...tail.subs]) sub.fail(message);
        continue;
      }
      if (!rows.length) continue;
      tail.cursor = rows[rows.length - 1].seq;
      const subs = [...tail.subs];
      for (const row of rows) {
        const e = entryOf(row);
        for (const sub of subs) sub.take(e);
      }
    }
    if (tails.size) poller = setTimeout(poll, pollMs).unref();
  }

  function subscribeStored(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
    let tail = tails.get(runId);
    if (!tail) {
      tail = { subs: new Set(), cursor: undefined };
      tails.set(runId, tail);
    }
    const t = tail;
    const sub = new RemoteSubscription(runId, lastEventId, listener, () => {
      t.subs.delete(sub);
      if (t.subs.size === 0 && tails.get(runId) === t) tails.delete(runId);
    });
    t.subs.add(sub);
    let rows: Row[];
    try {
      rows = retained(runId) ? rowsOf.all(runId) : [];
    } catch (err) {
      sub.fail(`SQLite stream bridge: reading run ${runId} failed: ${err instanceof Error ? err.message : String(err)}`);
      return () => sub.stop();
    }
    if (!sub.replay(rows.map(entryOf))) return () => sub.stop();
    if (t.cursor === undefined) t.cursor = rows.length ? rows[rows.length - 1].seq : -1;
    if (!poller) poller = setTimeout(poll, pollMs).unref();
    return () => sub.stop();
  }

  return {
    kind: "sqlite",
    async writer(runId: string, opts?: { resume?: boolean }): Promise<RunStreamWriter> {
      if (closed) throw new StreamBridgeError("The SQLite stream bridge is closed.", { code: "stream_bridge_closed" });
      sweep();
      // Rows already stored (a resumed run, or a run id seen before a restart): go on after them.
      await batcher.settle(`stream:${runId}`);
      const rows = opts?.resume || retained(runId) ? rowsOf.all(runId) : [];
      const entries = rows.map(entryOf);
      const stream = new RunStream(runId, shared.maxlen, Number.POSITIVE_INFINITY, entries.at(-1)?.at);
      for (const e of entries) if (e.item) stream.push(e.item);
      const w = new SqliteRunWriter(shared, runId, stream);
      local.set(runId, w);
      return w;
    },
    subscribe(runId: string, lastEventId: string | null, listener: StreamListener): () => void {
      if (closed) throw new StreamBridgeError("The SQLite stream bridge is closed.", { code: "stream_bridge_closed" });
      const w = local.get(runId);
      if (w) return w.stream.listen(lastEventId, listener);
      return subscribeStored(runId, lastEventId, listener);
    },
    async has(runId: string): Promise<boolean> {
      if (local.get(runId)?.stream.hasEntries) return true;
      return retained(runId);
    },
    async remainingTtlMs(runId: string): Promise<number | undefined> {
      const row = expiryOf.get(runId);
      if (!row || row.expires_at === null) return undefined;
      const left = row.expires_at - clock();
      return left > 0 ? left : undefined;
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await writers.drain();
      if (poller) clearTimeout(poller);
      for (const t of [...tails.values()]) for (const sub of [...t.subs]) sub.stop();
      tails.clear();
      if (owned) {
        await batcher.close();
        if (db.open) db.close();
      }
    },
  };
}
