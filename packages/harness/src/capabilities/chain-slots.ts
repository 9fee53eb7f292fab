/**
 * The one definition of where each of DeerFlow's middlewares sits in an
 * agent's chain (first = outermost `wrap*` layer, `before*` first, `after*`
 * last), and the typed slots that point into it. A capability or the core
 * chain places a middleware by a {@link ChainSlot} (`SLOT.Memory`), never by
 * a name string: a misspelt slot does not compile, and a middleware placed in
 * a slot that belongs to another middleware is refused when the chain is put
 * together (see {@link placeInChain}).
 */
import { ValidationError } from "../errors";
import type { AgentMiddleware } from "../runtime/types";

/** DeerFlow's middlewares in chain order (the lead agent, sub-agents and the SDK factory all follow it). */
export const CHAIN_ORDER = Object.freeze([
  "InputSanitizationMiddleware",
  "ToolOutputBudgetMiddleware",
  "ToolResultSanitizationMiddleware",
  "ThreadDataMiddleware",
  "UploadsMiddleware",
  "SandboxMiddleware",
  "DanglingToolCallMiddleware",
  "LLMErrorHandlingMiddleware",
  "GuardrailMiddleware",
  "SandboxAuditMiddleware",
  "ReadBeforeWriteMiddleware",
  "ToolProgressMiddleware",
  "ToolErrorHandlingMiddleware",
  "DynamicContextMiddleware",
  "SkillActivationMiddleware",
  "SkillToolPolicyMiddleware",
  "DurableContextMiddleware",
  "DeerFlowSummarizationMiddleware",
  "TodoMiddleware",
  "TokenUsageMiddleware",
  "TitleMiddleware",
  "MemoryMiddleware",
  "ViewImageMiddleware",
  "McpRoutingMiddleware",
  "DeferredToolFilterMiddleware",
  "SystemMessageCoalescingMiddleware",
  "SubagentLimitMiddleware",
  "LoopDetectionMiddleware",
  "TokenBudgetMiddleware",
  // programmatic `custom_middlewares` and configured extensions sit here (SLOT.Custom)
  "TerminalResponseMiddleware",
  "ModelLengthFinishReasonMiddleware",
  "SafetyFinishReasonMiddleware",
  "ClarificationMiddleware",
] as const);

/** The name of one of DeerFlow's middlewares. */
export type DeerFlowMiddlewareName = (typeof CHAIN_ORDER)[number];

declare const slotBrand: unique symbol;

/**
 * A place in the chain. Only the constants of {@link SLOT} are slots (the
 * brand keeps a string or a hand-made object out), so where a middleware
 * goes is checked by the compiler.
 */
export interface ChainSlot {
  /** The middleware this slot belongs to; `null` for {@link SLOT.Custom}, which holds middlewares that are not DeerFlow's. */
  readonly middleware: DeerFlowMiddlewareName | null;
  /** Position in the chain (ties keep the order they were given). */
  readonly rank: number;
  readonly [slotBrand]: true;
}

type SlotKey<N extends string> = N extends `${infer K}Middleware` ? K : never;

/** The slots, one per DeerFlow middleware (`SLOT.Memory` is `MemoryMiddleware`'s), plus `SLOT.Custom`. */
export type ChainSlots = { readonly [N in DeerFlowMiddlewareName as SlotKey<N>]: ChainSlot } & { readonly Custom: ChainSlot };

const CUSTOM_AFTER = CHAIN_ORDER.indexOf("TokenBudgetMiddleware");

function makeSlots(): ChainSlots {
  const out: Record<string, ChainSlot> = {};
  CHAIN_ORDER.forEach((name, i) => {
    out[name.slice(0, -"Middleware".length)] = Object.freeze({ middleware: name, rank: i }) as unknown as ChainSlot;
  });
  out.Custom = Object.freeze({ middleware: null, rank: CUSTOM_AFTER + 0.5 }) as unknown as ChainSlot;
  return Object.freeze(out) as unknown as ChainSlots;
}

/** Every slot of the chain, by the name of its middleware without the `Middleware` suffix. */
export const SLOT: ChainSlots = makeSlots();

const BY_NAME = new Map<string, ChainSlot>(CHAIN_ORDER.map((name) => [name, SLOT[name.slice(0, -"Middleware".length) as keyof ChainSlots]]));

/** The slot of a middleware by its runtime name: its own when it is one of DeerFlow's, else {@link SLOT.Custom}. */
export function slotOfName(name: string): ChainSlot {
  return BY_NAME.get(name) ?? SLOT.Custom;
}

/** A middleware and the slot it goes in. */
export interface SlottedMiddleware {
  slot: ChainSlot;
  middleware: AgentMiddleware;
}

/**
 * Put slotted middlewares in chain order (a stable sort by slot). A
 * middleware carrying one of DeerFlow's names must sit in that name's slot,
 * and a DeerFlow slot holds only its own middleware: a mismatch is a
 * ValidationError naming both, so a middleware cannot silently move.
 */
export function placeInChain(entries: readonly SlottedMiddleware[]): AgentMiddleware[] {
  for (const { slot, middleware } of entries) {
    const own = BY_NAME.get(middleware.name);
    if (slot.middleware ? middleware.name !== slot.middleware : own !== undefined) {
      throw new ValidationError(
        `middleware '${middleware.name}' was placed in the slot of ${slot.middleware ?? "custom middlewares"}; it belongs in ${own ? `the slot of ${own.middleware}` : "SLOT.Custom"}`,
        { code: "middleware_slot_mismatch", details: { middleware: middleware.name, slot: slot.middleware } },
      );
    }
  }
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.slot.rank - b.e.slot.rank || a.i - b.i)
    .map((x) => x.e.middleware);
}
