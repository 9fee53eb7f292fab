/**
 * Stream bridges (a run's events, replayable by id) and run signals
 * (cancel / slot released between processes): in memory, on SQLite, and on
 * Redis for several server processes.
 */
export { createMemoryStreamBridge } from "./memory-bridge";
export type { MemoryStreamBridgeOptions } from "./memory-bridge";
export { createMemoryRunSignals } from "./memory-signals";
export { formatEventId, parseEventId } from "./event-id";
export type { EventId } from "./event-id";
export { openRedisRunTransport } from "./redis-transport";
export type { RedisRunTransport, RedisRunTransportOptions } from "./redis-transport";
export { DEFAULT_STREAM_KEY_PREFIX } from "./redis-bridge";
export { DEFAULT_SIGNALS_CHANNEL } from "./redis-signals";
export { createSqliteStreamBridge, sqliteStreamBridgePath } from "./sqlite-bridge";
export type { SqliteStreamBridgeOptions } from "./sqlite-bridge";
