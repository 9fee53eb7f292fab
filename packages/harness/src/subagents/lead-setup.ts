import type { AppConfig } from "../config";
import type { ChatModel } from "../models";
import type { AgentMiddleware } from "../runtime/types";
import type { SandboxProvider } from "../sandbox";
import type { ToolDefinition } from "../tools/types";
import { sharedSubagentAdmission } from "./admission";
import { createChildAgentFactory } from "./child-agent";
import { SubagentExecutor } from "./executor";
import { SubagentRegistry } from "./registry";
import type { SubagentsSection } from "./registry";
import { createTaskTool } from "./task-tool";
import type { ChildAgentSpec } from "./task-tool";

/** Inputs of {@link createLeadSubagents}. */
export interface LeadSubagentsInput {
  config: AppConfig;
  /** `max_concurrent_subagents` of the run (already clamped to 1–4). */
  maxConcurrent: number;
  /** `max_total_subagents` of the run; default `subagents.max_total_per_run`. */
  maxTotal?: number;
  /** The lead's model name (what `inherit` resolves to). */
  parentModelName: string;
  /** The lead's final tool list (read when a task runs, so it may be assembled after this call). */
  parentTools(): readonly ToolDefinition[];
  /** Whether commands may run (isolated provider or `allow_host_bash`). */
  bashAllowed: boolean;
  sandboxProvider: SandboxProvider;
  /** The child's chat model for a configured name (`undefined` = the lead's model). */
  resolveModel(name: string | undefined): ChatModel;
  /** The child's middleware chain (the lead chain in sub-agent form). */
  childMiddleware(spec: ChildAgentSpec): AgentMiddleware[];
}

/** What the lead agent adds when `subagent_enabled` is on. */
export interface LeadSubagents {
  task: ToolDefinition;
  registry: SubagentRegistry;
  /** For `buildSystemPrompt({subagents})`. */
  prompt: { enabled: true; maxConcurrent: number; maxTotal: number; available: Array<{ name: string; description: string }> };
  /** For the SubagentLimit middleware. */
  limit: { maxConcurrent: number; maxTotal: number };
}

/**
 * The sub-agent pieces of one lead agent: the registry of the current config
 * (bash hidden without isolated bash), the `task` tool over the process-wide
 * admission gate (`subagent_runtime.max_running`), the child factory, the
 * prompt section and the per-response / per-run limits.
 */
export function createLeadSubagents(i: LeadSubagentsInput): LeadSubagents {
  const section = (i.config as { subagents?: SubagentsSection }).subagents ?? {};
  const registry = new SubagentRegistry({ config: section, bashAllowed: i.bashAllowed });
  const admission = sharedSubagentAdmission();
  const maxRunning = (i.config as { subagent_runtime?: { max_running?: number } }).subagent_runtime?.max_running;
  if (typeof maxRunning === "number") admission.setLimit(maxRunning);
  const maxTotal = Math.min(50, Math.max(1, i.maxTotal ?? section.max_total_per_run ?? 6));
  const task = createTaskTool({
    registry,
    parentTools: i.parentTools,
    parentModelName: i.parentModelName,
    createChildAgent: createChildAgentFactory({ resolveModel: i.resolveModel, middleware: i.childMiddleware }),
    executor: new SubagentExecutor({ admission }),
    sandboxProvider: i.sandboxProvider,
  });
  return {
    task,
    registry,
    prompt: {
      enabled: true,
      maxConcurrent: i.maxConcurrent,
      maxTotal,
      available: registry.available().map((t) => ({ name: t.name, description: t.description })),
    },
    limit: { maxConcurrent: i.maxConcurrent, maxTotal },
  };
}
