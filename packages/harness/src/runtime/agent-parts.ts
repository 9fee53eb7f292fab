import type { Checkpointer } from "../checkpoints";
import type { ChatModel, ModelSettings } from "../models";
import type { AgentState, StateSchema } from "../state";
import type { ToolDefinition } from "../tools";
import type { HookPlan } from "./middleware-chain";
import type { AgentMiddleware } from "./types";

/** Everything a run needs from its agent. */
export interface AgentParts<S extends AgentState> {
  name: string;
  model: ChatModel;
  systemPrompt?: string;
  modelSettings: ModelSettings;
  schema: StateSchema;
  tools: Map<string, ToolDefinition>;
  middleware: readonly AgentMiddleware<S>[];
  /** The middlewares' loop hooks in execution order (see {@link hookPlan}). */
  hooks: HookPlan<S>;
  checkpointer: Checkpointer;
  toolTimeoutMs?: number;
  defaultRecursionLimit: number;
}
