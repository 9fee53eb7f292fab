import { ValidationError } from "../errors";
import { isReasoningEffort, REASONING_EFFORTS } from "../models/types";
import type { ModelCallSettings } from "../models/types";

/**
 * A run's settings, typed (DeerFlow's runtime keys: model_name, thinking_enabled, is_plan_mode, subagent_enabled, …): parsed
 * once from the request's wire names by {@link readRuntimeOptions} and
 * passed on unchanged — to the agent factory and, as
 * `runtime.context.settings`, to tools and middlewares.
 */
export interface LeadRuntimeOptions extends ModelCallSettings {
  modelName?: string;
  isPlanMode: boolean;
  subagentEnabled: boolean;
  maxConcurrentSubagents: number;
  maxTotalSubagents?: number;
  agentName?: string;
  /** Agent-creation flow: skills restricted to `bootstrap`, `setup_agent` offered. */
  isBootstrap: boolean;
  nonInteractive: boolean;
  disableClarification: boolean;
  threadId?: string;
  runId?: string;
  userId: string;
}

/** The settings a tool or middleware reads from its run context (identity is in `context.identity`). */
export type RunContextSettings = Readonly<Omit<LeadRuntimeOptions, "threadId" | "runId" | "userId" | "agentName">>;

const AGENT_NAME = /^[A-Za-z0-9-]+$/;

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

function bool(v: unknown, key: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  throw new ValidationError(`Run option '${key}' must be a boolean (got ${JSON.stringify(v)})`);
}

function int(v: unknown, key: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === "string" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n)) throw new ValidationError(`Run option '${key}' must be a number (got ${JSON.stringify(v)})`);
  return Math.trunc(n);
}

/**
 * Merge `configurable` with `context` (context wins) and read DeerFlow's
 * runtime keys. Key presence counts: `thinking_enabled: false` is honoured.
 * This is the one place run settings are parsed: gateway, client and CLI call
 * it at their edge and pass the result on unchanged.
 */
export function readRuntimeOptions(configurable: Record<string, unknown> = {}, context: Record<string, unknown> = {}): LeadRuntimeOptions {
  // Looked up key by key instead of spreading both objects into a merged copy: this runs for every run request.
  const has = (key: string): boolean => Object.hasOwn(context, key) || Object.hasOwn(configurable, key);
  const get = (key: string): unknown => (Object.hasOwn(context, key) ? context[key] : Object.hasOwn(configurable, key) ? configurable[key] : undefined);
  const modelName = (get("model_name") ?? get("model")) as string | undefined;
  if (modelName !== undefined && typeof modelName !== "string") throw new ValidationError("Run option 'model_name' must be a string");
  const effort = get("reasoning_effort");
  if (effort !== undefined && effort !== null && !isReasoningEffort(effort)) {
    throw new ValidationError(`Run option 'reasoning_effort' must be one of ${REASONING_EFFORTS.join(", ")} (got ${JSON.stringify(effort)})`);
  }
  const agentName = get("agent_name") as string | undefined;
  if (agentName !== undefined && agentName !== null && (typeof agentName !== "string" || !AGENT_NAME.test(agentName))) {
    throw new ValidationError(`Invalid agent_name ${JSON.stringify(agentName)}: use letters, digits and '-'`);
  }
  const maxConc = int(get("max_concurrent_subagents"), "max_concurrent_subagents");
  const maxTotal = int(get("max_total_subagents"), "max_total_subagents");
  return {
    modelName: modelName || undefined,
    thinkingEnabled: has("thinking_enabled") ? bool(get("thinking_enabled"), "thinking_enabled") : undefined,
    reasoningEffort: effort ?? undefined,
    isPlanMode: bool(get("is_plan_mode"), "is_plan_mode") ?? false,
    subagentEnabled: bool(get("subagent_enabled"), "subagent_enabled") ?? false,
    maxConcurrentSubagents: clamp(maxConc ?? 3, 1, 4),
    maxTotalSubagents: maxTotal === undefined ? undefined : clamp(maxTotal, 1, 50),
    agentName: agentName || undefined,
    isBootstrap: bool(get("is_bootstrap"), "is_bootstrap") ?? false,
    nonInteractive: bool(get("non_interactive"), "non_interactive") ?? false,
    disableClarification: bool(get("disable_clarification"), "disable_clarification") ?? false,
    threadId: get("thread_id") as string | undefined,
    runId: get("run_id") as string | undefined,
    userId: (get("user_id") as string | undefined) || "default",
  };
}

/** The settings of a run that sets nothing (computed once: every run's settings start from them). */
export const DEFAULT_SETTINGS: Readonly<LeadRuntimeOptions> = Object.freeze(readRuntimeOptions());

/** Run settings from already-typed values (embedded use, tests): defaults for everything not given. */
export function runSettings(partial: Partial<LeadRuntimeOptions> = {}): LeadRuntimeOptions {
  const out: LeadRuntimeOptions = { ...DEFAULT_SETTINGS };
  const given = partial as Record<string, unknown>;
  for (const key in given) if (given[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = given[key];
  return out;
}
