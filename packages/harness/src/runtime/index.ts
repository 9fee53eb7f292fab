export { createAgent, assertThreadId, createThreadStateView } from "./agent";
export type { CreateAgentOptions, ThreadStateView } from "./agent";
export { GraphInterrupt, isAbortError, isGraphInterrupt } from "./interrupt";
export { composeModelCall, composeToolCall, hookOrder } from "./middleware-chain";
export { pendingToolCalls } from "./loop-steps";
export { errorToolMessage, normaliseToolResult } from "./tool-step";
export { INHERITED_CONTEXT_KEYS, runChild } from "./child-run";
export { createRunContext, RunSecrets } from "./run-context";
export type { RunContextInput, RunIdentity } from "./run-context";
export { readRuntimeOptions, runSettings } from "./run-settings";
export type { LeadRuntimeOptions, RunContextSettings } from "./run-settings";
export type { ChildLeaseProvider, ChildRunOptions, RunChildFn } from "./child-run";
export { AGENT_CALLER, callerTokens, createRunOutcomeRecorder, emptyRunOutcome } from "./outcome";
export type { CallerUsage, RunOutcome, RunOutcomeError, RunOutcomeRecorder, UsageTotals } from "./outcome";
export type {
  Agent,
  AgentMiddleware,
  HookResult,
  Interrupt,
  JumpTarget,
  ModelCallHandler,
  ModelCallRequest,
  RunConfig,
  RunInput,
  RunOptions,
  RunResult,
  RunStatus,
  RunStream,
  Runtime,
  StateSnapshot,
  StreamEvent,
  StreamMode,
  ToolCallHandler,
  ToolCallRequest,
  ToolCallResult,
} from "./types";
