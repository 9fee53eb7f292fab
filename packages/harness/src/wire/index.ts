/**
 * The wire types of the LangGraph-compatible HTTP API: what the gateway sends
 * and accepts under `/api/langgraph` (threads, runs, their stream) as JSON.
 *
 * Types only, no runtime code: a browser bundle imports this module with
 * `import type` and gets nothing from the harness at run time. Where a
 * harness type already is the wire shape it is re-exported from here, so
 * the two cannot drift apart.
 */
import type { ThreadResponse } from "../client/gateway-shapes";
import type { MultitaskStrategy, RunRecordStatus } from "../persistence/types";
import type { SubagentStatusValue, SubagentTokenUsage } from "../subagents/status-contract";

export type { ModelInfo, ModelsResponse, ThreadResponse } from "../client/gateway-shapes";
export type { MultitaskStrategy, RunRecordStatus } from "../persistence/types";
export type { SubagentStatusValue, SubagentStopReasonValue, SubagentTokenUsage } from "../subagents/status-contract";

/** A run's `status` on the wire (`GET /threads/{id}/runs/{run_id}`). */
export type WireRunStatus = RunRecordStatus;

/** `RunResponse`: one run as the gateway returns it. */
export interface WireRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: WireRunStatus;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  multitask_strategy: MultitaskStrategy;
  created_at: string;
  updated_at: string;
  total_input_tokens: number;
  total_output_tokens: number;
  total_tokens: number;
  llm_call_count: number;
  lead_agent_tokens: number;
  subagent_tokens: number;
  middleware_tokens: number;
  message_count: number;
  stop_reason: string | null;
  error: string | null;
}

/** A thread as the gateway returns it (`POST /threads`, `GET /threads/{id}`, search rows). */
export type WireThread = ThreadResponse;

/** `POST /threads`. */
export interface WireThreadCreate {
  thread_id?: string;
  metadata?: Record<string, unknown>;
  if_exists?: "raise" | "do_nothing";
  assistant_id?: string;
}

/** `POST /threads/search`. */
export interface WireThreadSearch {
  metadata?: Record<string, unknown>;
  status?: string;
  limit?: number;
  offset?: number;
  sort_by?: "thread_id" | "status" | "created_at" | "updated_at";
  sort_order?: "asc" | "desc";
  select?: string[];
}

/** The checkpoint a state or a run refers to. */
export interface WireCheckpoint {
  thread_id?: string;
  checkpoint_ns?: string;
  checkpoint_id?: string;
  [key: string]: unknown;
}

/** `GET /threads/{id}/state` (and each entry of `POST /threads/{id}/history`). */
export interface WireThreadState {
  values: Record<string, unknown>;
  next: string[];
  tasks?: unknown[];
  checkpoint: WireCheckpoint | null;
  parent_checkpoint?: WireCheckpoint | null;
  metadata: Record<string, unknown>;
  created_at: string | null;
  interrupts?: unknown[];
}

/** `POST /threads/{id}/state`. */
export interface WireStateUpdate {
  values?: Record<string, unknown>;
  as_node?: string;
  checkpoint_id?: string;
  checkpoint?: WireCheckpoint;
}

/**
 * Stream modes a run can be asked for. `messages-tuple` is how clients ask
 * for the `messages` mode; its frames are named `messages`.
 */
export type WireStreamMode = "values" | "updates" | "messages" | "messages-tuple" | "custom" | "checkpoints" | "debug" | "tasks" | "events";

/** `POST /threads/{id}/runs/stream` (and `/runs`, `/runs/wait`). */
export interface WireRunCreate {
  assistant_id: string;
  input?: Record<string, unknown> | null;
  command?: { resume?: unknown; goto?: unknown; update?: Record<string, unknown> } | null;
  config?: { recursion_limit?: number; configurable?: Record<string, unknown>; [key: string]: unknown };
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  checkpoint?: WireCheckpoint | null;
  checkpoint_id?: string;
  stream_mode?: WireStreamMode | WireStreamMode[];
  stream_subgraphs?: boolean;
  stream_resumable?: boolean;
  multitask_strategy?: MultitaskStrategy;
  on_disconnect?: "cancel" | "continue";
  if_not_exists?: "create" | "reject";
}

/**
 * Names of the SSE frames of a run's stream. A frame of a mode may carry a
 * namespace suffix (`updates|tools:…`) when sub-graphs stream.
 */
export type WireStreamEventName = "metadata" | "values" | "updates" | "messages" | "custom" | "checkpoints" | "tasks" | "debug" | "events" | "error" | "gap" | "end" | (string & {});

/** One SSE frame as a client reads it: the event name, the parsed `data`, and the frame `id` (`{epoch_ms}-{seq}`) if any. */
export interface WireStreamPart<T = unknown> {
  event: WireStreamEventName;
  data: T;
  id?: string;
}

/** `data` of the first frame, `metadata`. */
export interface WireMetadataEvent {
  run_id: string;
  thread_id?: string;
  attempt?: number;
}

/** `data` of an `error` frame. */
export interface WireErrorEvent {
  error?: string;
  message?: string;
  name?: string;
  code?: string;
  [key: string]: unknown;
}

/** A content block of a serialized message. */
export interface WireContentBlock {
  type: string;
  text?: string;
  thinking?: string;
  [key: string]: unknown;
}

/** A parsed tool call of an AI message. */
export interface WireToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
  type?: string;
}

/** A streamed tool-call delta (merged by `index`). */
export interface WireToolCallChunk {
  id?: string | null;
  name?: string | null;
  args?: string | null;
  index?: number | null;
  type?: string;
}

/** A message as serialized on the wire (state values, `messages` frames, also `AIMessageChunk` deltas). */
export interface WireMessage {
  type: string;
  id?: string;
  content: string | WireContentBlock[];
  name?: string | null;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
  tool_calls?: WireToolCall[];
  tool_call_chunks?: WireToolCallChunk[];
  invalid_tool_calls?: unknown[];
  tool_call_id?: string;
  status?: string;
  artifact?: unknown;
  usage_metadata?: unknown;
  run_id?: string;
  [key: string]: unknown;
}

/** `data` of a `messages` frame: the message (or chunk) and its metadata. */
export type WireMessagesEvent = [WireMessage, Record<string, unknown>];

/** The `task_*` custom events of a delegated sub-agent (`custom` frames). */
export type WireTaskEvent =
  | { type: "task_started"; task_id: string; description?: string; model_name?: string | null }
  | { type: "task_running"; task_id: string; message: WireMessage; message_index: number; total_messages: number; usage?: SubagentTokenUsage; model_name?: string | null }
  | { type: "task_completed"; task_id: string; result?: string; usage?: SubagentTokenUsage; model_name?: string | null }
  | { type: `task_${Exclude<SubagentStatusValue, "completed">}`; task_id: string; error?: string | null; usage?: SubagentTokenUsage; model_name?: string | null };

/** The `llm_retry` custom event: a model call failed and is retried. */
export interface WireLlmRetryEvent {
  type: "llm_retry";
  attempt?: number;
  max_attempts?: number;
  wait_ms?: number;
  reason?: string;
  message?: string;
  [key: string]: unknown;
}

/** The error body of a failed request: FastAPI-style `detail` (a string, `{code, message}`, or 422 items). */
export interface WireErrorBody {
  detail?: string | { code?: string; message?: string; [key: string]: unknown } | Array<{ msg?: string; loc?: unknown[] }>;
}
