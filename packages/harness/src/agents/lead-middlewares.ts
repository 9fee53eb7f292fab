import type { AppConfig } from "../config";
import type { ChatModel } from "../models";
import type { AgentMiddleware } from "../runtime";
import type { SandboxProvider } from "../sandbox";
import {
  createClarificationMiddleware,
  createDanglingToolCallMiddleware,
  createDurableContextMiddleware,
  createDynamicContextMiddleware,
  createGuardrailMiddleware,
  createInputSanitizationMiddleware,
  createLLMErrorHandlingMiddleware,
  createLoopDetectionMiddleware,
  createModelLengthFinishReasonMiddleware,
  createReadBeforeWriteMiddleware,
  createSafetyFinishReasonMiddleware,
  createSandboxAuditMiddleware,
  createSandboxMiddleware,
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
import type { MemoryProvider } from "../middlewares";
import { placeInChain, SLOT, slotOfName } from "../capabilities/chain-slots";
import type { ChainSlot, SlottedMiddleware } from "../capabilities/chain-slots";
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
  /** What DynamicContext (row 14) injects as `<memory>` (the memory capability's provider). */
  memoryProvider?: MemoryProvider;
  /** The capabilities' middlewares for this form of the chain, each with its slot (skills, memory, MCP, sub-agents). */
  capabilities?: readonly SlottedMiddleware[];
  /** Programmatic middlewares (DeerFlow's `custom_middlewares`, row 30). */
  custom?: AgentMiddleware[];
  /** Sub-agents run the chain without Uploads, Title, Todo, Clarification. */
  subagent?: boolean;
  /** A sub-agent's token budget overrides (`subagents.token_budget` / `subagents.agents.<name>.token_budget`). */
  subagentTokenBudget?: Record<string, unknown> | null;
}

/**
 * DeerFlow's lead middleware chain. Each middleware is placed by its typed
 * slot (capabilities/chain-slots.ts), so the order below is for reading only
 * and a middleware given the wrong slot is refused. Slots that later issues
 * fill (ToolProgress) are absent, not stubbed; the capabilities add theirs
 * (SkillActivation and SkillToolPolicy, Memory, McpRouting and
 * DeferredToolFilter, SubagentLimit) through `capabilities`.
 */
export function buildLeadMiddlewares(i: LeadMiddlewareInputs): AgentMiddleware[] {
  const c = i.config;
  const chain: SlottedMiddleware[] = [...(i.capabilities ?? [])];
  const add = (slot: ChainSlot, mw: AgentMiddleware | false | undefined | null) => {
    if (mw) chain.push({ slot, middleware: mw });
  };
  add(SLOT.InputSanitization, createInputSanitizationMiddleware());
  add(SLOT.ToolOutputBudget, c.tool_output?.enabled !== false && createToolOutputBudgetMiddleware(section(c.tool_output)));
  add(SLOT.ToolResultSanitization, createToolResultSanitizationMiddleware());
  add(SLOT.ThreadData, createThreadDataMiddleware({ base_dir: i.baseDir }));
  add(SLOT.Uploads, !i.subagent && createUploadsMiddleware({ base_dir: i.baseDir }));
  add(SLOT.Sandbox, createSandboxMiddleware({ provider: i.provider }));
  add(SLOT.DanglingToolCall, createDanglingToolCallMiddleware());
  add(SLOT.LLMErrorHandling, i.shared.llmErrorHandling);
  if (c.guardrails?.enabled) {
    add(
      SLOT.Guardrail,
      createGuardrailMiddleware({
        provider: resolveGuardrailProvider(c.guardrails.provider as never),
        fail_closed: c.guardrails.fail_closed,
        passport: c.guardrails.passport ?? null,
      }),
    );
  }
  add(SLOT.SandboxAudit, createSandboxAuditMiddleware());
  add(SLOT.ReadBeforeWrite, c.read_before_write?.enabled !== false && createReadBeforeWriteMiddleware({ provider: i.provider }));
  add(SLOT.ToolErrorHandling, createToolErrorHandlingMiddleware());
  add(
    SLOT.DynamicContext,
    !i.subagent &&
      createDynamicContextMiddleware({
        injection_enabled: c.memory?.injection_enabled ?? true,
        agent_name: i.agentName ?? null,
        memoryProvider: i.memoryProvider,
      }),
  );
  // delegation ledger capture + <durable_context_data>
  add(SLOT.DurableContext, createDurableContextMiddleware());
  if (c.summarization?.enabled) {
    add(
      SLOT.DeerFlowSummarization,
      createSummarizationMiddleware({
        ...section<object>(c.summarization),
        resolveModel: i.resolveModel,
        contextWindow: i.contextWindow ?? undefined,
      } as never),
    );
  }
  add(SLOT.Todo, !i.subagent && i.isPlanMode && createTodoMiddleware());
  add(SLOT.TokenUsage, c.token_usage?.enabled !== false && createTokenUsageMiddleware({ enabled: true }));
  add(SLOT.Title, !i.subagent && c.title?.enabled !== false && createTitleMiddleware({ ...section<object>(c.title), resolveModel: i.resolveModel } as never));
  add(SLOT.ViewImage, i.supportsVision && createViewImageMiddleware({ supportsVision: true }));
  add(SLOT.SystemMessageCoalescing, createSystemMessageCoalescingMiddleware());
  // A sub-agent runs on its parent's thread id: a fresh LoopDetection keeps its tool-call history apart from the lead's.
  add(SLOT.LoopDetection, c.loop_detection?.enabled !== false && (i.subagent ? createLoopDetectionMiddleware(section(c.loop_detection)) : i.shared.loopDetection));
  if (i.subagent) {
    // DeerFlow's sub-agent token budget is on by default: 1M tokens with summarization, else 2M, warning at 70%.
    add(SLOT.TokenBudget, createTokenBudgetMiddleware({ enabled: true, max_tokens: c.summarization?.enabled ? 1_000_000 : 2_000_000, warn_threshold: 0.7, ...section(i.subagentTokenBudget) }));
  } else {
    add(SLOT.TokenBudget, c.token_budget?.enabled === true && createTokenBudgetMiddleware(section(c.token_budget)));
  }
  // Programmatic middlewares: at the custom slot, or at their own when they carry one of DeerFlow's names.
  for (const mw of i.custom ?? []) add(slotOfName(mw.name), mw);
  add(SLOT.TerminalResponse, createTerminalResponseMiddleware());
  add(SLOT.ModelLengthFinishReason, createModelLengthFinishReasonMiddleware());
  add(SLOT.SafetyFinishReason, c.safety_finish_reason?.enabled !== false && createSafetyFinishReasonMiddleware(section(c.safety_finish_reason)));
  add(SLOT.Clarification, !i.subagent && createClarificationMiddleware()); // always last
  return placeInChain(chain);
}
