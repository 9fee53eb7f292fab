export { DeerFlowClient } from "./client";
export type { ClientArtifact } from "./client";
export { basicAgentFactory, BASIC_AGENT_PROMPT } from "./default-agent-factory";
export { ClientStreamTranslator, serializeClientMessage } from "./stream-translator";
export { ThreadIndex } from "./thread-index";
export type { ThreadIndexEntry } from "./thread-index";
export { buildHumanInputResponse, findClarificationRequest } from "./human-input";
export type { HumanInputAnswer, PendingClarification } from "./human-input";
export {
  buildModelInfo,
  buildModelsResponse,
  buildThreadResponse,
  modelInfoSchema,
  modelsResponseSchema,
  threadResponseSchema,
  toJsonSafe,
} from "./gateway-shapes";
export type { ModelInfo, ModelsResponse, ThreadResponse, ThreadResponseInput } from "./gateway-shapes";
export type {
  AgentBuildRequest,
  AgentFactory,
  ClientRunOptions,
  ClientRuntimeConfig,
  ClientStreamEvent,
  ClientUsage,
  DeerFlowClientOptions,
} from "./types";
