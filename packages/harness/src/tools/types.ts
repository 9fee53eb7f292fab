import type { z } from "zod";
import type { ContentBlock, ToolMessage } from "../messages";
import type { AgentState, Command } from "../state";
import type { JsonSchema } from "../models/types";
import type { RunChildFn } from "../runtime/child-run";
import type { RunOutcomeRecorder } from "../runtime/outcome";
import type { RunIdentity, RunSecrets } from "../runtime/run-context";
import type { RunContextSettings } from "../runtime/run-settings";

/**
 * Per-run context visible to tools and middlewares (DeerFlow's
 * `runtime.context`). Read the typed fields: `identity` (thread, run, user,
 * custom agent), `settings` (the parsed run settings) and `secrets` (the
 * request-scoped secrets). The request's other keys stay as given, in
 * DeerFlow's wire names, for tools written against DeerFlow; `thread_id`,
 * `run_id` and `user_id` mirror the identity. Build one with
 * `createRunContext`. What a run produces (stop reason, usage, errors) is
 * reported through `outcome`, not here.
 */
export interface RunContext {
  thread_id: string;
  run_id: string;
  user_id: string;
  readonly identity: RunIdentity;
  readonly settings: RunContextSettings;
  /** Never serialised with its values (see `RunSecrets`). */
  readonly secrets: RunSecrets;
  [key: string]: unknown;
}

/** A custom stream event: any object with a string `type`. */
export interface CustomEvent {
  type: string;
  [key: string]: unknown;
}

/** A stream event forwarded from a nested run (same shape as the runtime's `StreamEvent`). */
export interface NestedStreamEvent {
  mode: "values" | "updates" | "messages" | "custom" | "checkpoints" | "debug" | "tasks";
  ns: string[];
  data: unknown;
}

/** What a tool receives besides its arguments. */
export interface ToolRuntime<S extends AgentState = AgentState> {
  /** State as of the model step that requested this call (read-only). */
  readonly state: S;
  readonly context: RunContext;
  /** The run's outcome recorder (a sub-agent tool adds the child's usage here). */
  readonly outcome: RunOutcomeRecorder;
  readonly toolCallId: string;
  /** Aborted when the run is cancelled or the tool times out. */
  readonly signal: AbortSignal;
  /** Emit a `custom` stream event. */
  writer(event: CustomEvent): void;
  /** Forward an event of a nested run (e.g. a sub-agent) into this run's stream. */
  emit(event: NestedStreamEvent): void;
  /** This run's stream namespace (empty for a root run); nested runs extend it. */
  readonly namespace: string[];
  /**
   * Run another agent as a child of this tool call: ephemeral (no
   * checkpoints) on this thread, namespaced `task:<taskId>`, cancelled with
   * this call, inheriting identity, optionally holding a sandbox lease, its
   * events forwarded into this run's stream. Sub-agents use it.
   */
  runChild: RunChildFn;
  /**
   * Pause the run waiting for a human. Returns the resume value when the run
   * is resumed with `Command({resume})`; otherwise ends the run as interrupted.
   */
  interrupt<T = unknown>(value: unknown): T;
}

/** What `execute` may return. Strings and blocks become a successful tool message. */
export type ToolResult = string | ContentBlock[] | ToolMessage | Command | { content: string | ContentBlock[]; artifact?: unknown; status?: "success" | "error" };

/** A tool definition. Create with {@link tool}. */
export interface ToolDefinition<Args = any> {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType<Args>;
  /** JSON schema derived from `schema` (cached). */
  readonly parameters: JsonSchema;
  /** End the run right after this tool returns (LangChain's `return_direct`). */
  readonly returnDirect?: boolean;
  /** Per-call timeout in ms (the runtime aborts `signal` and returns an error result). */
  readonly timeoutMs?: number;
  /**
   * `false` when the tool only reads (changes nothing outside the run): the run loop then calls it without first
   * waiting for the checkpoint that asked for it to be durable. Unset means it may have side effects.
   */
  readonly sideEffects?: boolean;
  /** Free-form metadata (e.g. config `group`, MCP server). */
  readonly metadata?: Record<string, unknown>;
  execute(args: Args, runtime: ToolRuntime): Promise<ToolResult> | ToolResult;
}
