export type { ChatModel, JsonSchema, ModelRequest, ModelSettings, ModelStreamPart, ReasoningEffort, ToolSpec } from "./types";
export { AIMessageAccumulator, collectModelStream } from "./accumulate";
