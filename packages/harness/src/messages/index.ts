export type {
  AIMessage,
  AIMessageChunk,
  ChunkToolCall,
  ContentBlock,
  HumanMessage,
  ImageUrlBlock,
  InvalidToolCall,
  Message,
  MessageContent,
  MessageType,
  ReasoningBlock,
  RemoveMessage,
  SystemMessage,
  TextBlock,
  ThinkingBlock,
  ToolCall,
  ToolCallChunk,
  ToolMessage,
  UsageMetadata,
} from "./types";
export { REMOVE_ALL_MESSAGES } from "./types";
export { newAIMessageId, newMessageId, newToolCallId } from "./ids";
export {
  aiMessage,
  humanMessage,
  removeAllMessages,
  removeMessage,
  systemMessage,
  toolMessage,
} from "./builders";
export {
  contentText,
  hasToolCalls,
  isAIMessage,
  isHidden,
  isToolMessage,
  lastGenuineHumanIndex,
  lastIndexOfType,
  lastMessageOfType,
  messageText,
  reasoningText,
} from "./content";
export { coerceMessage } from "./coerce";
