import { createSkillActivationMiddleware } from "../middlewares/skill-activation";
import { createSkillToolPolicyMiddleware } from "../middlewares/skill-tool-policy";
import { createDescribeSkillTool, createRuntimeSkills } from "../skills";
import type { SkillRegistry } from "../skills";
import { mergeSkillAllowlists } from "../subagents";
import { SLOT } from "./chain-slots";
import type { Capability } from "./types";

/**
 * Skills: the runtime's registry (with the run hook that keeps each user's
 * sandbox view current). In an agent: the skill list of the prompt (or only
 * the names and `describe_skill` with `skills.deferred_discovery`), and the
 * SkillActivation and SkillToolPolicy middlewares, in a sub-agent too, there
 * limited to the skills both the lead and the sub-agent type may use.
 */
export const skillsCapability: Capability<SkillRegistry, "skills"> = {
  name: "skills",
  attach(host, options) {
    const { registry, viewHook } = createRuntimeSkills(host, { cwd: options.cwd, modelFactory: options.modelFactory, log: options.log });
    return { service: registry, runHooks: [viewHook] };
  },
  forAgent(ctx, registry) {
    if (!registry) return undefined;
    const deferred = ctx.config.skills?.deferred_discovery === true;
    return {
      addTools: deferred ? [createDescribeSkillTool({ registry, agentSkills: ctx.agentSkills })] : undefined,
      middlewares(form) {
        const agentSkills = form.subagent ? mergeSkillAllowlists(ctx.agentSkills, form.skills) : ctx.agentSkills;
        return [
          { slot: SLOT.SkillActivation, middleware: createSkillActivationMiddleware({ registry, agentSkills }) },
          { slot: SLOT.SkillToolPolicy, middleware: createSkillToolPolicyMiddleware({ registry, agentSkills }) },
        ];
      },
      async promptSections() {
        const set = await registry.promptSkills(ctx.settings.userId, ctx.agentSkills).catch((err: unknown) => {
          ctx.warn(`skills could not be listed for the prompt: ${(err as Error).message}`);
          return undefined;
        });
        return {
          skills: set?.skills,
          disabledSkills: set?.disabledSkills,
          skillIndex: deferred ? (set?.skills.map((s) => s.name) ?? []) : undefined,
        };
      },
    };
  },
};
