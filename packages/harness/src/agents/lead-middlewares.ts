import type { AppConfig } from "../config";
import type { ChatModel } from "../models";
import type { AgentMiddleware } from "../runtime";
import type { SandboxProvider } from "../sandbox";
import {
  createClarificationMiddleware,
  createDanglingToolCallMiddleware,
  createDeferredToolFilterMiddleware,
  createDurableContextMiddleware,
  createDynamicContextMiddleware,
  createGuardrailMiddleware,
  createInputSanitizationMiddleware,
  createLLMErrorHandlingMiddleware,
  createLoopDetectionMiddleware,
  createMcpRoutingMiddleware,
  createModelLengthFinishReasonMiddleware,
  createReadBeforeWriteMiddleware,
  createSafetyFinishReasonMiddleware,
  createSandboxAuditMiddleware,
  createSandboxMiddleware,
  createSubagentLimitMiddleware,
  createSummarizationMiddleware,
  createSystemMessageCoalescingMiddleware,
  createTerminalResponseMiddleware,
  createThreadDataMiddleware,
  createTitleMiddleware,
  createTodoMiddleware,
  createTokenBudgetMiddleware,
  createTokenUsageMiddleware,
  createToolErrorHandlingMiddleware,
  createToolOutputBudgetMiddleware,
  createToolResultSanitizationMiddleware,
  createUploadsMiddleware,
  createViewImageMiddleware,
} from "../middlewares";
import type { MemoryProvider, MemorySink } from "../middlewares";
import { createMemoryMiddleware } from "../middlewares/memory";
import { createSkillActivationMiddleware } from "../middlewares/skill-activation";
import { createSkillToolPolicyMiddleware } from "../middlewares/skill-tool-policy";
import type { SkillLookup } from "../skills";
import { orderChain } from "./chain-order";
import { resolveGuardrailProvider } from "./guardrail-provider";

/** A config section without null/undefined values (so middleware option defaults apply). */
function section<T>(value: unknown): T {
  if (!value || typeof value !== "object") return {} as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== null && v !== undefined) out[k] = v;
  return out as T;
}

/** Stateful middlewares shared across runs (circuit breaker, loop history). */
export interface SharedLeadMiddlewares {
  llmErrorHandling: AgentMiddleware;
  loopDetection: AgentMiddleware;
}

/** Build the middlewares whose state must outlive one run, once per config. */
export function createSharedLeadMiddlewares(config: AppConfig): SharedLeadMiddlewares {
  return {
    llmErrorHandling: createLLMErrorHandlingMiddleware({ llm_call: section(config.llm_call), circuit_breaker: section(config.circuit_breaker) }),
    loopDetection: createLoopDetectionMiddleware(section(config.loop_detection)),
  };
}

/** Inputs of {@link buildLeadMiddlewares}. */
export interface LeadMiddlewareInputs {
  config: AppConfig;
  baseDir: string;
  provider: SandboxProvider;
  shared: SharedLeadMiddlewares;
  agentName?: string;
  isPlanMode: boolean;
  supportsVision: boolean;
  contextWindow?: number | null;
  /** Resolve a configured model name (title/summarization `model_name`). */
  resolveModel(name: string): ChatModel;
  memoryProvider?: MemoryProvider;
  /** Where the Memory middleware (row 22) queues finished conversations; none = no Memory middleware. */
  memorySink?: MemorySink;
  /** Programmatic middlewares (DeerFlow's `custom_middlewares`, row 30). */
  custom?: AgentMiddleware[];
  /** Sub-agents run the chain without Uploads, Title, Todo, Clarification. */
  subagent?: boolean;
  /** SubagentLimit (row 27) for a lead with `subagent_enabled`: task calls kept per response and per run. */
  subagentLimit?: { maxConcurrent: number; maxTotal: number };
  /** A sub-agent's token budget overrides (`subagents.token_budget` / `subagents.agents.<name>.token_budget`). */
  subagentTokenBudget?: Record<string, unknown> | null;
  /** The skill registry: SkillActivation and SkillToolPolicy (rows 15–16) run when it is given. */
  skills?: SkillLookup;
  /** Skills this agent may use (a custom agent's `skills`; null = all). */
  agentSkills?: string[] | null;
  /** Deferred MCP tools (`tool_search.enabled`): McpRouting and DeferredToolFilter (rows 24–25). */
  deferred?: { names: string[]; catalogHash: string; routes: Record<string, { priority: number; keywords: string[] }> };
}

/**
 * DeerFlow's lead middleware chain, in the exact order of inventory §3.
 * Slots that later issues fill (ToolProgress) are absent, not stubbed;
 * Memory joins when a memory sink is given (the runtime's memory service); SubagentLimit joins when `subagentLimit` is given (a lead with `subagent_enabled`); McpRouting and DeferredToolFilter join when MCP tools are deferred (`tool_search.enabled`).
 */
export function buildLeadMiddlewares(i: LeadMiddlewareInputs): AgentMiddleware[] {
  const c = i.config;
  const chain: AgentMiddleware[] = [];
  const add = (mw: AgentMiddleware | false | undefined | null) => {
    if (mw) chain.push(mw);
  };
  add(createInputSanitizationMiddleware()); // 1
  add(c.tool_output?.enabled !== false && createToolOutputBudgetMiddleware(section(c.tool_output))); // 2
  add(createToolResultSanitizationMiddleware()); // 3
  add(createThreadDataMiddleware({ base_dir: i.baseDir })); // 4
  add(!i.subagent && createUploadsMiddleware({ base_dir: i.baseDir })); // 5
  add(createSandboxMiddleware({ provider: i.provider })); // 6
  add(createDanglingToolCallMiddleware()); // 7
  add(i.shared.llmErrorHandling); // 8
  if (c.guardrails?.enabled) {
    // 9b
    add(
      createGuardrailMiddleware({
        provider: resolveGuardrailProvider(c.guardrails.provider as never),
        fail_closed: c.guardrails.fail_closed,
        passport: c.guardrails.passport ?? null,
      }),
    );
  }
  add(createSandboxAuditMiddleware()); // 10
  add(c.read_before_write?.enabled !== false && createReadBeforeWriteMiddleware({ provider: i.provider })); // 11
  add(createToolErrorHandlingMiddleware()); // 13
  add(
    !i.subagent &&
      createDynamicContextMiddleware({
        injection_enabled: c.memory?.injection_enabled ?? true,
        agent_name: i.agentName ?? null,
        memoryProvider: i.memoryProvider,
      }),
  ); // 14
  if (i.skills) {
    add(createSkillActivationMiddleware({ registry: i.skills, agentSkills: i.agentSkills })); // 15
    add(createSkillToolPolicyMiddleware({ registry: i.skills, agentSkills: i.agentSkills })); // 16
  }
  add(createDurableContextMiddleware()); // 17: delegation ledger capture + <durable_context_data>
  if (c.summarization?.enabled) {
    add(
      createSummarizationMiddleware({
        ...section<object>(c.summarization),
        resolveModel: i.resolveModel,
        contextWindow: i.contextWindow ?? undefined,
      } as never),
    ); // 18
  }
  add(!i.subagent && i.isPlanMode && createTodoMiddleware()); // 19
  add(c.token_usage?.enabled !== false && createTokenUsageMiddleware({ enabled: true })); // 20
  add(!i.subagent && c.title?.enabled !== false && createTitleMiddleware({ ...section<object>(c.title), resolveModel: i.resolveModel } as never)); // 21
  add(!i.subagent && !!i.memorySink && createMemoryMiddleware({ sink: i.memorySink, agent_name: i.agentName })); // 22
  add(i.supportsVision && createViewImageMiddleware({ supportsVision: true })); // 23
  const topK = Number((c.tool_search as { auto_promote_top_k?: unknown } | undefined)?.auto_promote_top_k ?? 3);
  add(i.deferred && Object.keys(i.deferred.routes).length > 0 && createMcpRoutingMiddleware({ routes: i.deferred.routes, catalogHash: i.deferred.catalogHash, topK })); // 24
  add(i.deferred && i.deferred.names.length > 0 && createDeferredToolFilterMiddleware({ deferredNames: i.deferred.names, catalogHash: i.deferred.catalogHash })); // 25
  add(createSystemMessageCoalescingMiddleware()); // 26
  add(!i.subagent && i.subagentLimit && createSubagentLimitMiddleware({ max_concurrent: i.subagentLimit.maxConcurrent, max_total: i.subagentLimit.maxTotal })); // 27
  // A sub-agent runs on its parent's thread id: a fresh LoopDetection keeps its tool-call history apart from the lead's.
  add(c.loop_detection?.enabled !== false && (i.subagent ? createLoopDetectionMiddleware(section(c.loop_detection)) : i.shared.loopDetection)); // 28
  if (i.subagent) {
    // DeerFlow's sub-agent token budget is on by default: 1M tokens with summarization, else 2M, warning at 70%.
    add(createTokenBudgetMiddleware({ enabled: true, max_tokens: c.summarization?.enabled ? 1_000_000 : 2_000_000, warn_threshold: 0.7, ...section(i.subagentTokenBudget) }));
  } else {
    add(c.token_budget?.enabled === true && createTokenBudgetMiddleware(section(c.token_budget))); // 29
  }
  for (const mw of i.custom ?? []) add(mw); // 30
  add(createTerminalResponseMiddleware()); // 32
  add(createModelLengthFinishReasonMiddleware()); // 33
  add(c.safety_finish_reason?.enabled !== false && createSafetyFinishReasonMiddleware(section(c.safety_finish_reason))); // 34
  add(!i.subagent && createClarificationMiddleware()); // 35, always last
  // The order is the canonical one (chain-order.ts), whatever order the slots above were added in.
  return orderChain(chain);
}
