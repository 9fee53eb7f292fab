export { DeerFlowClient } from "./client";
export type { ClientArtifact } from "./client";
export { ClientStreamTranslator, serializeClientMessage } from "./stream-translator";
export { clientUsageOfRun, clientUsageOfRunResponse } from "./usage";
export { importLegacyThreadIndex, LEGACY_THREAD_INDEX_PATH } from "./legacy-thread-index";
export { buildHumanInputResponse, findClarificationRequest } from "./human-input";
export type { HumanInputAnswer, PendingClarification } from "./human-input";
export {
  buildModelInfo,
  buildModelsResponse,
  buildThreadResponse,
  deriveThreadStatus,
  modelInfoSchema,
  modelsResponseSchema,
  threadDetailResponse,
  threadRecordResponse,
  threadResponseSchema,
  threadSummaryResponse,
  toJsonSafe,
  wireTimestamp,
} from "./gateway-shapes";
export type { ModelEntry, ModelInfo, ModelsResponse, ModelsSource, ThreadResponse, ThreadResponseInput } from "./gateway-shapes";
export type {
  ClientRunOptions,
  ClientStreamEvent,
  ClientUsage,
  ClientUsageByCaller,
  DeerFlowClientOptions,
} from "./types";
export { MemoryUnavailableError } from "./memory";
export type { MemoryStatusResponse } from "./memory";
export { chatAnswer } from "./client";
export { RemoteDeerFlowClient } from "./remote-client";
export type { RemoteDeerFlowClientOptions, RemoteUser } from "./remote-client";
export { RemoteTransport, normaliseBaseUrl } from "./remote-transport";
export type { RemoteCallOptions, RemoteStream, RemoteTransportOptions } from "./remote-transport";
export { readSseEvents } from "./remote-sse";
export type { ReadSseOptions, SseEvent } from "./remote-sse";
export { translateRunStream } from "./remote-stream";
export type { RemoteRunOutcome } from "./remote-stream";
export {
  RemoteAuthError,
  RemoteClientError,
  RemoteConnectionError,
  RemoteHttpError,
  RemoteProtocolError,
  RemoteRunError,
  RemoteTimeoutError,
} from "./remote-errors";
export type { RemoteAuthReason, RemoteCallSite } from "./remote-errors";
