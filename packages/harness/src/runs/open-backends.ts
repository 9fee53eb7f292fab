import { randomUUID } from "node:crypto";
import os from "node:os";
import type { AppConfig } from "../config";
import { ConfigError } from "../errors";
import { MemoryRunLeases, MemoryRunLock, persistenceDbPath, SqliteRunLocks } from "../persistence";
import type { PersistenceStores } from "../persistence";
import type { OpenedStorage } from "../storage";
import type { RunBackends, RunLeases, RunLock, RunOwnershipSettings, RunSignals, StreamBridge } from "./backend-types";
import { createMemoryRunSignals, createMemoryStreamBridge, createSqliteStreamBridge, openRedisRunTransport, sqliteStreamBridgePath } from "./bridge";

/** The environment variable that names a Redis bridge (and implies `stream_bridge.type: redis`). */
export const STREAM_BRIDGE_REDIS_URL_ENV = "DEER_FLOW_STREAM_BRIDGE_REDIS_URL";

/** What {@link openRunBackends} opens from. */
export interface OpenRunBackendsOptions {
  config: AppConfig | undefined;
  /** The runtime's opened storage (PostgreSQL provides `runLock` / `runLeases`). */
  storage: OpenedStorage;
  stores: PersistenceStores;
  dataDir: string;
  log: (message: string) => void;
  /** Environment (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

interface StreamBridgeSection {
  type?: "memory" | "redis" | "sqlite";
  queue_maxsize?: number;
  redis_url?: string | null;
  stream_ttl_seconds?: number;
}

interface RunOwnershipSection {
  lease_seconds?: number;
  grace_seconds?: number;
  heartbeat_enabled?: boolean;
}

/** `run_ownership:` in milliseconds. */
export function ownershipSettings(config: AppConfig | undefined): RunOwnershipSettings {
  const o = ((config as { run_ownership?: RunOwnershipSection | null } | undefined)?.run_ownership ?? {}) as RunOwnershipSection;
  const leaseSeconds = o.lease_seconds ?? 30;
  const graceSeconds = o.grace_seconds ?? 10;
  if (!(leaseSeconds > 0)) throw new ConfigError(`run_ownership.lease_seconds must be > 0 (got ${leaseSeconds})`, { details: { key: "run_ownership.lease_seconds" } });
  if (!(graceSeconds >= 0)) throw new ConfigError(`run_ownership.grace_seconds must be ≥ 0 (got ${graceSeconds})`, { details: { key: "run_ownership.grace_seconds" } });
  return { leaseMs: Math.round(leaseSeconds * 1000), graceMs: Math.round(graceSeconds * 1000), heartbeat: o.heartbeat_enabled === true };
}

/**
 * Open a process's run backends from the config: the thread lock and run
 * leases from the storage when it provides them (PostgreSQL), else SQLite
 * tables in `gateway.db` (backend sqlite) or memory; the stream bridge and
 * signals by `stream_bridge.type` — memory, SQLite (the bridge; signals stay
 * in memory), or Redis (also when
 * `DEER_FLOW_STREAM_BRIDGE_REDIS_URL` is set). Runs are `shared` between
 * processes when both the lock/leases and the bridge are shared ones.
 */
export async function openRunBackends(options: OpenRunBackendsOptions): Promise<RunBackends> {
  const { config, storage, log } = options;
  const env = options.env ?? process.env;
  const ownership = ownershipSettings(config);
  const section = ((config as { stream_bridge?: StreamBridgeSection | null } | undefined)?.stream_bridge ?? {}) as StreamBridgeSection;
  const queueMaxsize = section.queue_maxsize ?? 256;
  const ttlSeconds = section.stream_ttl_seconds ?? 86400;
  const envUrl = env[STREAM_BRIDGE_REDIS_URL_ENV]?.trim() || undefined;
  const bridgeType = envUrl ? "redis" : (section.type ?? "memory");
  const closers: Array<() => unknown> = [];

  let lock: RunLock;
  let leases: RunLeases;
  let sharedLocks = false;
  if (storage.runLock && storage.runLeases) {
    lock = storage.runLock;
    leases = storage.runLeases;
    sharedLocks = true;
  } else if (storage.backend === "sqlite") {
    // Opened on first use: one process's runs use them only with `run_ownership.heartbeat_enabled`.
    let sqlite: SqliteRunLocks | undefined;
    const file = persistenceDbPath(options.dataDir);
    const open = () => (sqlite ??= new SqliteRunLocks(file));
    closers.push(() => sqlite?.close());
    lock = {
      acquire: (...a) => open().lock.acquire(...a),
      renew: (...a) => open().lock.renew(...a),
      release: (...a) => open().lock.release(...a),
      holder: (...a) => open().lock.holder(...a),
    };
    leases = {
      acquire: (...a) => open().leases.acquire(...a),
      renew: (...a) => open().leases.renew(...a),
      release: (...a) => open().leases.release(...a),
      expired: (...a) => open().leases.expired(...a),
      get: (...a) => open().leases.get(...a),
    };
  } else {
    lock = new MemoryRunLock();
    leases = new MemoryRunLeases();
  }

  let bridge: StreamBridge;
  let signals: RunSignals;
  if (bridgeType === "redis") {
    const url = envUrl ?? section.redis_url ?? undefined;
    if (!url) {
      throw new ConfigError(`stream_bridge.type is redis but no URL is set: give stream_bridge.redis_url or ${STREAM_BRIDGE_REDIS_URL_ENV}`, {
        details: { key: "stream_bridge.redis_url" },
      });
    }
    const transport = await openRedisRunTransport({ url, queueMaxsize, ttlSeconds, log });
    bridge = transport.bridge;
    signals = transport.signals;
    closers.push(() => transport.close());
  } else if (bridgeType === "sqlite") {
    // One file under the data dir: a run's events outlive this process, and processes on this host read them.
    bridge = createSqliteStreamBridge({ path: sqliteStreamBridgePath(options.dataDir), queueMaxsize, ttlSeconds });
    signals = createMemoryRunSignals();
    closers.push(() => bridge.close(), () => signals.close());
  } else {
    bridge = createMemoryStreamBridge({ queueMaxsize, ttlSeconds });
    signals = createMemoryRunSignals();
    closers.push(() => bridge.close(), () => signals.close());
  }

  const shared = sharedLocks && bridgeType === "redis";
  if (sharedLocks !== (bridgeType === "redis")) {
    log(
      sharedLocks
        ? `[runs] database.backend postgres with the ${bridgeType} stream bridge: runs are not shared between processes (set stream_bridge.type: redis)`
        : "[runs] stream_bridge.type redis without database.backend postgres: runs are not shared between processes",
    );
  }
  let closed: Promise<void> | undefined;
  return {
    ownerId: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    shared,
    lock,
    leases,
    bridge,
    signals,
    ownership,
    close() {
      closed ??= (async () => {
        for (const c of closers.reverse()) {
          try {
            await c();
          } catch (err) {
            log(`[runs] closing the run backends failed: ${(err as Error)?.message ?? String(err)}`);
          }
        }
      })();
      return closed;
    },
  };
}

/** In-memory backends for one process (tests, embedders that open a runtime without a config). */
export function memoryRunBackends(ownership: Partial<RunOwnershipSettings> = {}, bridgeOptions: { queueMaxsize?: number; ttlSeconds?: number } = {}): RunBackends {
  const bridge = createMemoryStreamBridge({ queueMaxsize: bridgeOptions.queueMaxsize ?? 256, ttlSeconds: bridgeOptions.ttlSeconds ?? 86400 });
  const signals = createMemoryRunSignals();
  return {
    ownerId: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    shared: false,
    lock: new MemoryRunLock(),
    leases: new MemoryRunLeases(),
    bridge,
    signals,
    ownership: { leaseMs: 30_000, graceMs: 10_000, heartbeat: false, ...ownership },
    async close() {
      await bridge.close();
      await signals.close();
    },
  };
}
