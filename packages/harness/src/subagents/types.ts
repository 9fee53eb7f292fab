import { DeerFlowError } from "../errors";
import type { DeerFlowErrorOptions } from "../errors";
import type { AIMessage } from "../messages";
import type { AgentState } from "../state";
import type { SubagentStopReasonValue, SubagentTokenUsage } from "./status-contract";

/** A resolved sub-agent type: built-in or from `subagents.custom_agents`, with overrides applied. */
export interface SubagentConfig {
  name: string;
  /** Shown to the lead model in the `task` tool description and the system prompt. */
  description: string;
  systemPrompt: string;
  /** Allowed tool names (`null` = inherit every parent tool). Always intersected with the parent's tools. */
  tools: string[] | null;
  /** Never offered to this type (the `task` tool itself is always removed). */
  disallowedTools: string[];
  /** Skill allowlist (`null` = the parent's skills). */
  skills: string[] | null;
  /** A configured model name, or `inherit` for the parent's model. */
  model: string;
  /** Cap on MODEL calls (not graph steps). */
  maxTurns: number;
  timeoutSeconds: number;
  /** `subagents.agents.<name>.token_budget` (the TokenBudget middleware's options), or `null`. */
  tokenBudget: Record<string, unknown> | null;
  /** Needs a shell: hidden and refused when bash is not isolated (or allowed on the host). */
  requiresBash: boolean;
  source: "builtin" | "custom";
}

/** Lifecycle of one execution (terminal: the last four). */
export type SubagentStatus = "pending" | "running" | "completed" | "failed" | "cancelled" | "timed_out";

/** What one sub-agent execution produced. */
export interface SubagentResult {
  /** The provider's tool-call id of the dispatching `task` call. */
  taskId: string;
  status: Exclude<SubagentStatus, "pending" | "running">;
  result?: string;
  error?: string;
  stopReason?: SubagentStopReasonValue;
  /** AI messages of the child, in order. */
  aiMessages: AIMessage[];
  /** Cumulative usage of the child's model calls. */
  usage: SubagentTokenUsage;
  /** Model calls made by the child. */
  modelCalls: number;
  /** The child's last state (its messages, for acceptance checks), when it got that far. */
  finalState?: AgentState;
  startedAt: number;
  completedAt: number;
}

/** A sub-agent failure raised on purpose (bad registry input, unavailable type…). */
export class SubagentError extends DeerFlowError {
  constructor(message: string, options: DeerFlowErrorOptions & { code?: string } = {}) {
    super(options.code ?? "subagent_error", message, options);
  }
}
