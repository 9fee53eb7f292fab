/** Wire and view types for the LangGraph-compatible stream as the UI consumes it. */
import type { Subtask } from "./subtasks";

/** A content block inside a LangChain message. */
export interface ContentBlock {
  type: string;
  text?: string;
  thinking?: string;
  [key: string]: unknown;
}

/** A parsed tool call on an AI message. */
export interface ToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
  type?: string;
}

/** A streaming tool-call delta; merged by `index`. */
export interface ToolCallChunk {
  id?: string | null;
  name?: string | null;
  args?: string | null;
  index?: number | null;
  type?: string;
}

/** A LangChain-serialised message (also covers `AIMessageChunk` deltas). */
export interface WireMessage {
  type: string;
  id?: string;
  content: string | ContentBlock[];
  name?: string | null;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
  tool_calls?: ToolCall[];
  tool_call_chunks?: ToolCallChunk[];
  invalid_tool_calls?: unknown[];
  tool_call_id?: string;
  status?: string;
  artifact?: unknown;
  usage_metadata?: unknown;
  run_id?: string;
  [key: string]: unknown;
}

/** One item of the plan-mode todo list. */
export interface Todo {
  content?: string;
  status?: "pending" | "in_progress" | "completed" | string;
}

/** A notice shown as a toast (llm_retry, errors). */
export interface Notice {
  id: number;
  kind: "retry" | "error" | "info";
  text: string;
}

/** Lifecycle of the current run as seen by the UI. */
export type RunPhase = "idle" | "starting" | "streaming" | "done" | "error" | "cancelled";

/** Timing of a tool step, in client milliseconds. */
export interface ToolTiming {
  start: number;
  end?: number;
}

/** The whole client-side view state of one thread. */
export interface ThreadView {
  threadId?: string;
  messages: WireMessage[];
  /** Ids of messages assembled from streamed chunks since the last `values` snapshot. */
  streamingIds: string[];
  title: string;
  artifacts: string[];
  todos: Todo[];
  runId?: string;
  lastEventId?: string;
  phase: RunPhase;
  error?: string;
  notices: Notice[];
  timings: Record<string, ToolTiming>;
  nextNoticeId: number;
  /** Sub-agent cards by `task` tool-call id, from the `task_*` custom events. */
  subtasks: Record<string, Subtask>;
}

/** One SSE part as yielded by the SDK (`{event, data, id}`). */
export interface StreamPart {
  event: string;
  data: unknown;
  id?: string;
}
