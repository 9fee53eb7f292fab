import { createSubagentLimitMiddleware } from "../middlewares";
import { createLeadSubagents } from "../subagents";
import { SLOT } from "./chain-slots";
import type { Capability } from "./types";

/**
 * Sub-agents ("ultra" mode, the run's `subagent_enabled`): the `task` tool
 * over the process-wide admission gate, its prompt section and the
 * SubagentLimit middleware. A child runs the lead chain in sub-agent form
 * (every capability's slots included) on its own model: `inherit` is the
 * lead's, thinking stays allowed.
 */
export const subagentsCapability: Capability<never, "subagents"> = {
  name: "subagents",
  forAgent(ctx) {
    if (!ctx.settings.subagentEnabled) return undefined;
    const subagents = createLeadSubagents({
      config: ctx.config,
      maxConcurrent: ctx.settings.maxConcurrentSubagents,
      maxTotal: ctx.settings.maxTotalSubagents,
      parentModelName: ctx.modelName,
      parentTools: ctx.finalTools,
      bashAllowed: ctx.bashAllowed,
      sandboxProvider: ctx.sandboxProvider,
      resolveModel: ctx.childModel,
      childMiddleware: (spec) => ctx.subagentChain({ subagent: true, skills: spec.config.skills, tokenBudget: spec.config.tokenBudget }),
    });
    return {
      addTools: [subagents.task],
      middlewares: (form) =>
        form.subagent ? [] : [{ slot: SLOT.SubagentLimit, middleware: createSubagentLimitMiddleware({ max_concurrent: subagents.limit.maxConcurrent, max_total: subagents.limit.maxTotal }) }],
      promptSections: () => ({ subagents: subagents.prompt }),
    };
  },
};
