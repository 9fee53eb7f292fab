export { RunService } from "./run-service";
export type { RunHost, RunPolicy, RunServiceOptions } from "./run-host";
export type { CancelAction, RunEndState, RunHandle, RunRequest } from "./run-types";
export { RunRecorder } from "./run-recorder";
export type { FinishedRun, RunEnd, RunHook, StartedRun } from "./run-recorder";
export { MessageCoalescer, mergeChunks } from "./message-coalescer";
export { agentRunMetadata, decideEnd, STORE_FAILED } from "./run-end";
export { memoryRunBackends, openRunBackends, ownershipSettings, STREAM_BRIDGE_REDIS_URL_ENV } from "./open-backends";
export type { OpenRunBackendsOptions } from "./open-backends";
export type {
  RunBackends,
  RunLease,
  RunLeases,
  RunLock,
  RunLockHolder,
  RunOwnershipSettings,
  RunSignal,
  RunSignals,
  RunStreamWriter,
  StreamWriterOptions,
  StreamBridge,
  StreamGap,
  StreamItem,
  StreamListener,
} from "./backend-types";
export {
  createMemoryRunSignals,
  createMemoryStreamBridge,
  createSqliteStreamBridge,
  DEFAULT_SIGNALS_CHANNEL,
  DEFAULT_STREAM_KEY_PREFIX,
  formatEventId,
  openRedisRunTransport,
  parseEventId,
} from "./bridge";
export type { EventId, MemoryStreamBridgeOptions, RedisRunTransport, RedisRunTransportOptions, SqliteStreamBridgeOptions } from "./bridge";
