import type { AgentMiddleware } from "../runtime";
import { CHAIN_ORDER, slotOfName } from "../capabilities/chain-slots";

/**
 * Where each of DeerFlow's middlewares sits is defined once, with the typed
 * slots that point into it, in `capabilities/chain-slots.ts`. The lead
 * agent's chain and a sub-agent's place middlewares by slot; this is the
 * by-name ordering for chains assembled from instances (the SDK factory's
 * features, programmatic middlewares).
 */
export const MIDDLEWARE_ORDER: readonly string[] = CHAIN_ORDER;

/**
 * Put a chain in canonical order: DeerFlow's middlewares by
 * {@link MIDDLEWARE_ORDER}, others at the custom-middleware slot (after
 * TokenBudget), ties kept in the order given (a stable sort).
 */
export function orderChain<M extends Pick<AgentMiddleware, "name">>(chain: readonly M[]): M[] {
  return chain
    .map((mw, i) => ({ mw, i, rank: slotOfName(mw.name).rank }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map((x) => x.mw);
}
