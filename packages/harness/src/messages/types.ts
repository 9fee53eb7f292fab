/**
 * Messages in the LangChain-serialised JSON shape that the LangGraph HTTP API
 * uses on the wire. The same objects live in state, in checkpoints and in
 * stream events, so nothing is translated between layers.
 */

/** A plain text content block. */
export interface TextBlock {
  type: "text";
  text: string;
}

/** An image content block (OpenAI `image_url` style). */
export interface ImageUrlBlock {
  type: "image_url";
  image_url: string | { url: string; detail?: "auto" | "low" | "high" };
}

/** A reasoning block (OpenAI responses / LangChain standard block). */
export interface ReasoningBlock {
  type: "reasoning";
  reasoning: string;
}

/** A thinking block (Anthropic style). */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
}

/** Any other block type is preserved untouched. */
export interface UnknownBlock {
  type: string;
  [key: string]: unknown;
}

export type ContentBlock = TextBlock | ImageUrlBlock | ReasoningBlock | ThinkingBlock | UnknownBlock;

/** Message content: a string or a list of content blocks. */
export type MessageContent = string | ContentBlock[];

/** A parsed tool call requested by the model. */
export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  type?: "tool_call";
}

/** A tool call as a streamed chunk carries it: read from that chunk's own argument text, its id null on continuations. */
export type ChunkToolCall = Omit<ToolCall, "id"> & { id: string | null };

/** A tool call the model produced but whose arguments could not be parsed. */
export interface InvalidToolCall {
  id?: string | null;
  name?: string | null;
  args?: string | null;
  error?: string | null;
  type?: "invalid_tool_call";
}

/** A streamed fragment of a tool call (arguments arrive as partial JSON text). */
export interface ToolCallChunk {
  type?: "tool_call_chunk";
  id?: string | null;
  name?: string | null;
  args?: string | null;
  index: number;
}

/** Token usage of one model call. */
export interface UsageMetadata {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_token_details?: Record<string, number>;
  output_token_details?: Record<string, number>;
}

interface MessageBase {
  id?: string;
  content: MessageContent;
  name?: string | null;
  additional_kwargs: Record<string, unknown>;
  response_metadata: Record<string, unknown>;
}

/** A user turn. */
export interface HumanMessage extends MessageBase {
  type: "human";
}

/** A system instruction. */
export interface SystemMessage extends MessageBase {
  type: "system";
}

/** A model reply, possibly with tool calls. */
export interface AIMessage extends MessageBase {
  type: "ai";
  tool_calls: ToolCall[];
  invalid_tool_calls: InvalidToolCall[];
  usage_metadata?: UsageMetadata | null;
}

/** The result of one tool call. */
export interface ToolMessage extends MessageBase {
  type: "tool";
  tool_call_id: string;
  status: "success" | "error";
  artifact?: unknown;
}

/** Any message stored in state. */
export type Message = HumanMessage | SystemMessage | AIMessage | ToolMessage;

/** The four message types. */
export type MessageType = Message["type"];

/** A streamed delta of an AI message (`messages-tuple` stream mode). */
export interface AIMessageChunk {
  type: "AIMessageChunk";
  id: string;
  content: MessageContent;
  name?: string | null;
  additional_kwargs: Record<string, unknown>;
  response_metadata: Record<string, unknown>;
  tool_calls: ChunkToolCall[];
  invalid_tool_calls: InvalidToolCall[];
  tool_call_chunks: ToolCallChunk[];
  usage_metadata: UsageMetadata | null;
  chunk_position?: "last" | null;
}

/** Marker that removes one message (by id) when written to `messages`. */
export interface RemoveMessage {
  type: "remove";
  id: string;
}

/** Special id: a `RemoveMessage` with this id clears the whole message list. */
export const REMOVE_ALL_MESSAGES = "__remove_all__";
