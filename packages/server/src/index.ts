/**
 * @deerflow/server — the HTTP gateway: LangGraph-compatible threads/runs/SSE
 * API plus DeerFlow's REST endpoints, on Hono.
 */
export { createGateway, startServer } from "./gateway";
export type { Gateway } from "./gateway";
export type { AgentFactory, AgentRunConfig, GatewayOptions, ModelInfo, UploadLimits } from "./options";
export { HttpError } from "./http-error";
export { openSqliteStores } from "./store/sqlite-stores";
export type {
  GatewayStores,
  MessageRow,
  MessageStore,
  MultitaskStrategy,
  RunRecord,
  RunStatus,
  RunStore,
  RunUsage,
  ThreadRecord,
  ThreadStore,
} from "./store/types";
export { RunEventBuffer } from "./sse/event-buffer";
export { formatFrame, parseEventId } from "./sse/frame";
export { runCreateRequestSchema } from "./runs/run-request";
export type { RunCreateRequest } from "./runs/run-request";
