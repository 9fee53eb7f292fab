import { randomUUID } from "node:crypto";
import type { AgentState } from "../state";
import type { ToolRuntime } from "../tools/types";
import type { Agent, RunInput, RunResult, StreamEvent, StreamMode } from "./types";

/** What a child run needs of a sandbox provider: a lease that keeps the thread's environment alive. */
export interface ChildLeaseProvider {
  acquire(threadId: string, options: { userId: string }): Promise<string>;
  release(id: string): Promise<void>;
}

/** Identity and attribution keys a child inherits from its parent's run context. */
export const INHERITED_CONTEXT_KEYS = [
  "user_id",
  "user_role",
  "oauth_provider",
  "oauth_id",
  "channel_user_id",
  "is_internal",
  "authz_attributes",
  "trace_id",
  "deerflow_trace_id",
  "agent_name",
] as const;

/** Options of {@link runChild}. */
export interface ChildRunOptions {
  /** The dispatching tool-call id: the child's events appear under `task:<taskId>`. */
  taskId: string;
  /** The child's starting state (e.g. the parent's `sandbox` and `thread_data`). */
  initialState?: Partial<AgentState>;
  /** Cancels the child (the parent's tool signal when absent). */
  signal?: AbortSignal;
  /** Extra context entries for the child (on top of the inherited identity). */
  context?: Record<string, unknown>;
  recursionLimit?: number;
  /** Hold a lease on the thread's sandbox for the child's whole run, so the environment outlives a parent that ends first. */
  sandboxProvider?: ChildLeaseProvider;
  /** Sees every child event first (then it is forwarded into the parent's stream). */
  onEvent?(event: StreamEvent): void;
  /** Forward the child's events into the parent's stream (default true). */
  forward?: boolean;
}

/** How a tool starts a nested run: `toolRuntime.runChild` has this shape. */
export type RunChildFn = (agent: Agent, input: RunInput, options: ChildRunOptions) => Promise<RunResult>;

const CHILD_MODES: StreamMode[] = ["values", "updates", "messages", "custom"];

/**
 * Run `agent` as a child of the tool call behind `parent`: an ephemeral run
 * (no checkpoints) on the parent's thread id (so it shares the thread's
 * workspace), namespaced `[...parent.namespace, "task:<id>"]`, cancelled with
 * the parent, inheriting the parent's identity (`user_id`, roles, trace ids)
 * with `is_subagent: true`, and forwarding its events into the parent's
 * stream (the parent keeps only the modes it streams; the gateway keeps
 * namespaced events only for `stream_subgraphs`). Never throws for a failed
 * child: the failure is in the result.
 */
export async function runChild(parent: Pick<ToolRuntime, "context" | "namespace" | "signal" | "emit">, agent: Agent, input: RunInput, options: ChildRunOptions): Promise<RunResult> {
  const parentContext = parent.context;
  const { threadId, runId: parentRunId, userId, agentName } = parentContext.identity;
  // The wire keys are copied for tools written against DeerFlow; the typed identity is passed as such.
  // The request's secrets stay with the parent: a child binds none.
  const context: Record<string, unknown> = {};
  for (const key of INHERITED_CONTEXT_KEYS) if (parentContext[key] !== undefined) context[key] = parentContext[key];
  Object.assign(context, options.context ?? {}, {
    is_subagent: true,
    parent_run_id: parentRunId,
    parent_tool_call_id: options.taskId,
  });
  let leaseId: string | undefined;
  if (options.sandboxProvider) leaseId = await options.sandboxProvider.acquire(threadId, { userId });
  const forward = options.forward !== false;
  try {
    const stream = agent.stream(input, {
      threadId,
      runId: randomUUID(),
      context,
      identity: { userId, agentName },
      namespace: [...parent.namespace, `task:${options.taskId}`],
      ephemeral: true,
      initialState: options.initialState,
      signal: options.signal ?? parent.signal,
      recursionLimit: options.recursionLimit,
      streamMode: CHILD_MODES,
      onEvent: (event) => {
        options.onEvent?.(event);
        if (forward) parent.emit(event);
      },
    });
    return await stream.result;
  } finally {
    if (leaseId) await options.sandboxProvider!.release(leaseId);
  }
}
