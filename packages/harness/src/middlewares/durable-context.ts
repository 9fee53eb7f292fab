import { z } from "zod";
import { humanMessage, systemMessage } from "../messages";
import type { Message } from "../messages";
import type { AgentMiddleware, HookResult, Runtime } from "../runtime/types";
import { MAX_DELEGATIONS, threadStateSchema } from "../state";
import type { AgentState, DelegationEntry } from "../state";
import { changedDelegations, extractDelegations, renderDelegationLedger } from "../subagents/delegation-ledger";
import { DURABLE_CONTEXT_AUTHORITY_CONTRACT, DURABLE_CONTEXT_DATA_KEY } from "./summarization-projection";
import { parseMiddlewareOptions } from "./zod-options";

const optionsSchema = z
  .object({
    /** Render budget of the ledger block in chars. */
    ledger_max_chars: z.number().int().positive().default(6000),
  })
  .strict();

/** Options of {@link createDurableContextMiddleware}. */
export type DurableContextOptions = z.input<typeof optionsSchema>;

/**
 * When the ledger is full, compare only the part of the freshly extracted
 * entries that the ledger still retains: older `task` calls that fell out of
 * the 50-entry window must not come back as "new" entries of this run.
 */
function retainedWindow(fresh: DelegationEntry[], existing: readonly DelegationEntry[]): DelegationEntry[] {
  if (existing.length < MAX_DELEGATIONS) return fresh;
  const at = fresh.findIndex((e) => e.id === existing[0].id);
  return at >= 0 ? fresh.slice(at) : fresh.slice(-MAX_DELEGATIONS);
}

/** True when some AI message holds a `task` call with an id: only those make ledger entries. */
function hasTaskCall(messages: readonly Message[]): boolean {
  for (const m of messages) {
    if (m.type !== "ai") continue;
    const calls = m.tool_calls;
    if (calls) for (const call of calls) if (call.name === "task" && call.id) return true;
  }
  return false;
}

function capture(state: AgentState, runtime: Runtime): HookResult {
  // Without a `task` call nothing is extracted, so nothing is new or changed against the ledger.
  if (!hasTaskCall(state.messages)) return undefined;
  const existing = ((state as { delegations?: DelegationEntry[] }).delegations ?? []) as DelegationEntry[];
  const fresh = retainedWindow(extractDelegations(state.messages), existing);
  const changed = changedDelegations(fresh, existing, runtime.runId);
  return changed.length ? { delegations: changed } : undefined;
}

/**
 * DurableContext (DeerFlow chain #17). Capture: before and after each model
 * call, `task` calls become `in_progress` ledger entries tagged with the run
 * id, upgraded by their terminal ToolMessage's status metadata
 * (`state.delegations`, merged by `mergeDelegations`). Injection: every model
 * request gets, after its leading system messages, the authority-contract
 * SystemMessage and a hidden `<durable_context_data>` HumanMessage holding
 * the ledger with its guidance per entry — on the request only, never in
 * state. (The conversation summary is projected by the Summarization
 * middleware in the same format.)
 */
export function createDurableContextMiddleware(options: DurableContextOptions = {}): AgentMiddleware {
  const o = parseMiddlewareOptions("DurableContextMiddleware", optionsSchema, options);
  return {
    name: "DurableContextMiddleware",
    stateSchema: { delegations: threadStateSchema.delegations },
    beforeModel: capture,
    afterModel: capture,
    async wrapModelCall(request, handler) {
      const ledger = renderDelegationLedger(((request.state as { delegations?: DelegationEntry[] }).delegations ?? []) as DelegationEntry[], o.ledger_max_chars);
      if (!ledger) return handler(request);
      const msgs = request.messages;
      let i = 0;
      while (i < msgs.length && msgs[i].type === "system") i++;
      const injected: Message[] = [
        systemMessage(DURABLE_CONTEXT_AUTHORITY_CONTRACT, { id: "durable-context-ledger-contract" }),
        humanMessage(`<durable_context_data>\n${ledger}\n</durable_context_data>`, {
          id: "durable-context-ledger",
          additional_kwargs: { hide_from_ui: true, [DURABLE_CONTEXT_DATA_KEY]: true },
        }),
      ];
      return handler({ ...request, messages: [...msgs.slice(0, i), ...injected, ...msgs.slice(i)] });
    },
  };
}
