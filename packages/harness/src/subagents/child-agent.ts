import type { ChatModel, ModelSettings } from "../models";
import { createAgent } from "../runtime/agent";
import type { Agent, AgentMiddleware } from "../runtime/types";
import { threadStateSchema } from "../state";
import type { StateSchema } from "../state";
import type { ChildAgentFactory, ChildAgentSpec } from "./task-tool";

/** Options of {@link createChildAgentFactory}. */
export interface ChildAgentFactoryOptions {
  /** The chat model for an effective model name (`undefined` = the default model). Thinking stays allowed in sub-agents. */
  resolveModel(name: string | undefined): ChatModel;
  /**
   * The sub-agent's middleware chain (e.g. the lead chain built with
   * `subagent: true`, plus a TokenBudget from `spec.config.tokenBudget`).
   * Called once per execution; the executor's own middlewares go first.
   */
  middleware?(spec: ChildAgentSpec): AgentMiddleware[];
  stateSchema?: StateSchema;
  modelSettings?: ModelSettings;
  toolTimeoutMs?: number;
}

/**
 * A {@link ChildAgentFactory} over `createAgent`: the child gets its own
 * system prompt, the filtered tools, the executor's middlewares first and the
 * given chain after them, DeerFlow's ThreadState channels, and no
 * checkpointer (children run ephemeral).
 */
export function createChildAgentFactory(options: ChildAgentFactoryOptions): ChildAgentFactory {
  return (spec: ChildAgentSpec): Agent =>
    createAgent({
      model: options.resolveModel(spec.modelName),
      tools: spec.tools,
      middleware: [...spec.middleware, ...(options.middleware?.(spec) ?? [])],
      systemPrompt: spec.systemPrompt,
      stateSchema: options.stateSchema ?? threadStateSchema,
      name: spec.config.name,
      modelSettings: options.modelSettings,
      toolTimeoutMs: options.toolTimeoutMs,
      onDuplicateTool: () => undefined,
    });
}
