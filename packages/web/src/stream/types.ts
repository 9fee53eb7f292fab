/** View types of a thread as the UI shows it; the wire shapes are the gateway's own (`harness/src/wire`). */
import type { WireContentBlock, WireMessage, WireStreamPart, WireToolCall, WireToolCallChunk } from "@deerflow-ts/harness/wire";
import type { Subtask } from "./subtasks";

/** A content block of a serialized message. */
export type ContentBlock = WireContentBlock;
/** A parsed tool call on an AI message. */
export type ToolCall = WireToolCall;
/** A streaming tool-call delta; merged by `index`. */
export type ToolCallChunk = WireToolCallChunk;
export type { WireMessage };

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
  /**
   * Ids of the human messages whose run the user stopped, read from the thread's run records (status
   * `interrupted`) when the thread is opened, so a reload still marks those turns "Stopped".
   */
  stoppedTurns?: string[];
}

/** One SSE frame of a run's stream (`{event, data, id}`). */
export type StreamPart = WireStreamPart;
